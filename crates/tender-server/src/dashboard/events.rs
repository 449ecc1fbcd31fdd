//! An event's page: its payload, and every delivery of it to each endpoint with every attempt and
//! a resend button (CONTRACT §7).
//!
//! Reads and the resend go through the webhook use cases with the session's context.

use super::auth::Done;
use super::layout::{self, badge, html_response, page, Notice, Section};
use super::webhooks::{deliveries, endpoint_label, endpoints, resend_button};
use super::{see_other, user_message, DashError, DashboardState, PageResult, Posted, Session};
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use maud::{html, Markup};
use serde_json::Value;
use std::collections::HashMap;
use tender_core::error::CoreError;
use tender_core::store::Collection;

async fn render_event(
    state: &DashboardState,
    session: &Session,
    id: &str,
    status: StatusCode,
    notice: Notice,
) -> PageResult {
    let raw = state
        .services()
        .retrieve_raw(&session.scope(), Collection::Events, "event", id)
        .await?;
    let event: Value = serde_json::from_str(&raw).map_err(|e| {
        DashError::Core(tender_core::error::StoreError::Corrupt(e.to_string()).into())
    })?;
    let ds = deliveries(state, session, id).await?;
    let urls: HashMap<String, String> = endpoints(state, session)
        .await?
        .into_iter()
        .map(|e| (e.id, e.url))
        .collect();
    let object = &event["data"]["object"];
    let object_link = object_link(&event);
    let pretty = serde_json::to_string_pretty(&event).unwrap_or(raw);
    let title = event["type"].as_str().unwrap_or("Event").to_string();
    let body = html! {
        section.card {
            dl.props {
                dt { "Event id" } dd.mono { (id) }
                dt { "Created" } dd { (layout::when(event["created"].as_i64().unwrap_or_default())) }
                dt { "Object" } dd {
                    @if let Some(link) = &object_link {
                        a.mono href=(link) { (object["id"].as_str().unwrap_or_default()) }
                    } @else {
                        span.mono { (object["id"].as_str().unwrap_or_default()) }
                    }
                }
                dt { "Request" } dd.mono { (event["request"]["id"].as_str().unwrap_or("—")) }
            }
        }
        section.card #deliveries {
            h2 { "Deliveries" }
            @if ds.is_empty() {
                (super::empty_state("No endpoint was subscribed to this event when it happened."))
            }
            @for d in &ds {
                @let endpoint = d["webhook_endpoint"].as_str().unwrap_or_default();
                div.delivery-block {
                    div.row {
                        (badge(d["status"].as_str().unwrap_or_default()))
                        span.mono { (endpoint_label(&urls, endpoint)) }
                        @if let Some(next) = d["next_attempt_at"].as_i64() {
                            span.muted.small { "next attempt " (layout::when(next)) }
                        }
                        (resend_button(session, id, endpoint))
                    }
                    (attempts_table(d))
                }
            }
        }
        section.card {
            h2 { "Event data" }
            pre.json { (pretty) }
        }
    };
    Ok(html_response(
        status,
        page(session, Section::Webhooks, &title, &notice, body),
    ))
}

/// Every attempt of delivery `d`: when, the answer (or why there was none), how long, what came back.
fn attempts_table(d: &Value) -> Markup {
    html! {
        @let attempts = d["attempts"].as_array().cloned().unwrap_or_default();
        @if attempts.is_empty() {
            p.muted.small { "No attempt yet." }
        } @else {
            table.attempts {
                thead { tr { th { "Attempted" } th { "Response" } th.num { "Duration" } th { "Body or error" } } }
                tbody {
                    @for a in &attempts {
                        tr {
                            td.muted.date { (layout::when(a["attempted_at"].as_i64().unwrap_or_default())) }
                            td {
                                @if let Some(code) = a["response_status"].as_u64() {
                                    (badge(if (200..300).contains(&code) { "succeeded" } else { "failed" }))
                                    " " span.mono { (code) }
                                } @else {
                                    (badge("failed")) " " span.muted { "no response" }
                                }
                            }
                            td.num { (a["duration_ms"].as_i64().unwrap_or_default()) " ms" }
                            td.small.mono {
                                @if let Some(err) = a["error"].as_str() { (err) }
                                @else { (a["response_body"].as_str().unwrap_or_default()) }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The dashboard page of the object an event is about, when it has one.
fn object_link(event: &Value) -> Option<String> {
    let object = &event["data"]["object"];
    match (object["object"].as_str(), object["id"].as_str()) {
        (Some("payment"), Some(pid)) => Some(format!("/dashboard/payments/{pid}")),
        (Some("refund"), _) => object["payment"]
            .as_str()
            .map(|pid| format!("/dashboard/payments/{pid}")),
        (Some("customer"), Some(cid)) if event["type"] != "customer.deleted" => {
            Some(format!("/dashboard/customers/{cid}"))
        }
        _ => None,
    }
}

/// `GET /dashboard/events/{id}`.
pub async fn retrieve_event(
    State(state): State<DashboardState>,
    session: Session,
    Path(id): Path<String>,
    Query(q): Query<Done>,
) -> PageResult {
    let notice = match q.done.as_deref() {
        Some("resent") => Notice::Success("Delivery scheduled: it is sent within seconds.".into()),
        _ => Notice::None,
    };
    render_event(&state, &session, &id, StatusCode::OK, notice).await
}

/// `POST /dashboard/events/{id}/resend` (`webhook_endpoint`).
pub async fn resend_event(
    State(state): State<DashboardState>,
    Path(id): Path<String>,
    posted: Posted,
) -> PageResult {
    let session = &posted.session;
    let endpoint = posted.fields.get("webhook_endpoint").unwrap_or_default();
    match state
        .services()
        .webhooks()
        .resend_event(&session.ctx(), &id, endpoint)
        .await
    {
        Ok(_) => Ok(see_other(&format!("/dashboard/events/{id}?done=resent"))),
        Err(e @ CoreError::NotFound { .. }) => Err(e.into()),
        Err(e) => match user_message(&e) {
            Some(m) => {
                render_event(
                    &state,
                    session,
                    &id,
                    StatusCode::BAD_REQUEST,
                    Notice::Error(m),
                )
                .await
            }
            None => Err(e.into()),
        },
    }
}
