//! Webhooks: endpoints (add with the signing secret shown once, enable/disable, delete), the
//! recent events with their delivery status, and each event's page with every delivery attempt
//! and a resend button per endpoint.

use std::collections::HashMap;

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use maud::{html, Markup};
use serde_json::Value;
use tender_core::error::CoreError;
use tender_core::event::EVENT_TYPES;
use tender_core::services::ListParams;
use tender_core::store::Collection;
use tender_core::webhooks::service::EndpointFields;
use tender_core::webhooks::webhook::{EndpointStatus, WebhookEndpoint};

use super::auth::Done;
use super::layout::{self, badge, csrf_field, html_response, page, post_button, Notice, Section};
use super::payments::parse_page;
use super::{see_other, user_message, DashError, DashboardState, PageResult, Posted, Session};

/// How many recent events the webhooks page shows with their deliveries.
const RECENT_EVENTS: u32 = 10;

/// What the add form held, to show again after a refusal.
#[derive(Default)]
struct Draft {
    url: String,
    description: String,
    events: Vec<String>,
}

/// A just-created endpoint and its secret, shown once.
struct Reveal {
    url: String,
    secret: String,
}

pub(super) async fn endpoints(
    state: &DashboardState,
    session: &Session,
) -> Result<Vec<WebhookEndpoint>, DashError> {
    let raw = state
        .services()
        .list_raw(
            &session.scope(),
            Collection::WebhookEndpoints,
            &ListParams {
                limit: 100,
                ..ListParams::default()
            },
            Vec::new(),
        )
        .await?;
    parse_page(&raw)
}

/// The deliveries of an event, as the API shows them.
pub(super) async fn deliveries(
    state: &DashboardState,
    session: &Session,
    event_id: &str,
) -> Result<Vec<Value>, DashError> {
    Ok(state
        .services()
        .webhooks()
        .list_event_deliveries(&session.scope(), event_id)
        .await?)
}

pub(super) fn endpoint_label<'a>(urls: &'a HashMap<String, String>, id: &'a str) -> &'a str {
    urls.get(id).map(String::as_str).unwrap_or(id)
}

pub(super) fn resend_button(session: &Session, event_id: &str, endpoint_id: &str) -> Markup {
    html! {
        form.inline method="post" action=(format!("/dashboard/events/{event_id}/resend")) {
            (csrf_field(session))
            input type="hidden" name="webhook_endpoint" value=(endpoint_id);
            button.small type="submit" { "Resend" }
        }
    }
}

fn add_form(session: &Session, draft: &Draft) -> Markup {
    let all = draft.events.is_empty() || draft.events.iter().any(|e| e == "*");
    html! {
        form #add-endpoint method="post" action="/dashboard/webhooks" {
            (csrf_field(session))
            div.field {
                label for="url" { "Endpoint URL" }
                input #url type="url" name="url" value=(draft.url) required placeholder="https://example.com/webhooks";
            }
            div.field {
                label for="description" { "Description" }
                input #description type="text" name="description" value=(draft.description) placeholder="optional";
            }
            div.field.checks {
                span.label { "Events to send" }
                label { input type="checkbox" name="enabled_events" value="*" checked[all]; "all events" }
                @for t in EVENT_TYPES {
                    label {
                        input type="checkbox" name="enabled_events" value=(t) checked[!all && draft.events.iter().any(|e| e == t)];
                        code { (t) }
                    }
                }
            }
            button.primary type="submit" { "Add endpoint" }
        }
    }
}

async fn render_webhooks(
    state: &DashboardState,
    session: &Session,
    status: StatusCode,
    notice: Notice,
    reveal: Option<Reveal>,
    draft: Draft,
) -> PageResult {
    let endpoints = endpoints(state, session).await?;
    let urls: HashMap<String, String> = endpoints
        .iter()
        .map(|e| (e.id.clone(), e.url.clone()))
        .collect();
    let raw = state
        .services()
        .list_raw(
            &session.scope(),
            Collection::Events,
            &ListParams {
                limit: RECENT_EVENTS,
                ..ListParams::default()
            },
            Vec::new(),
        )
        .await?;
    let events: Vec<Value> = parse_page(&raw)?;
    let mut recent = Vec::with_capacity(events.len());
    for e in events {
        let id = e["id"].as_str().unwrap_or_default().to_string();
        let d = deliveries(state, session, &id).await?;
        recent.push((e, d));
    }
    let body = html! {
        @if let Some(r) = &reveal {
            div.reveal {
                h2 { "Signing secret for " (r.url) }
                p { "Copy it now: it is shown only this once. Receivers verify the "
                    code { "Tender-Signature" } " header with it." }
                code.secret #endpoint-secret { (r.secret) }
            }
        }
        (endpoints_card(session, &endpoints))
        section.card {
            h2 { "Add an endpoint" }
            (add_form(session, &draft))
        }
        (recent_events_card(session, &recent, &urls))
    };
    Ok(html_response(
        status,
        page(session, Section::Webhooks, "Webhooks", &notice, body),
    ))
}

/// The endpoints, each with its actions (enable or disable, roll the secret, delete, edit).
fn endpoints_card(session: &Session, endpoints: &[WebhookEndpoint]) -> Markup {
    html! {
        section.card.table-card {
            h2.pad { "Endpoints" }
            @if endpoints.is_empty() {
                (super::empty_state("No endpoints yet: add one below."))
            } @else {
                table #endpoints {
                    thead { tr { th { "URL" } th { "Events" } th { "Status" } th { "Created" } th {} } }
                    tbody {
                        @for e in endpoints {
                            tr {
                                td {
                                    span.mono { (e.url) }
                                    @if let Some(d) = &e.description { br; span.muted.small { (d) } }
                                }
                                td.small {
                                    @if e.enabled_events.iter().any(|x| x == "*") { "all events" }
                                    @else { (e.enabled_events.join(", ")) }
                                }
                                td { (badge(e.status.as_str())) }
                                td.muted.date { (layout::when(e.created)) }
                                td.actions {
                                    @if e.status == EndpointStatus::Enabled {
                                        (post_button(session, &format!("/dashboard/webhooks/{}/disable", e.id), "Disable", "small"))
                                    } @else {
                                        (post_button(session, &format!("/dashboard/webhooks/{}/enable", e.id), "Enable", "small"))
                                    }
                                    (post_button(session, &format!("/dashboard/webhooks/{}/roll", e.id), "Roll secret", "small"))
                                    (post_button(session, &format!("/dashboard/webhooks/{}/delete", e.id), "Delete", "small danger"))
                                    details.edit {
                                        summary { "Edit" }
                                        form method="post" action=(format!("/dashboard/webhooks/{}/edit", e.id)) {
                                            (layout::csrf_field(session))
                                            div.field { label { "URL" } input type="text" name="url" value=(e.url) required; }
                                            div.field { label { "Description" } input type="text" name="description" maxlength="1000" value=(e.description.as_deref().unwrap_or("")); }
                                            fieldset.events {
                                                legend { "Events" }
                                                @let all = e.enabled_events.iter().any(|x| x == "*");
                                                label { input type="checkbox" name="enabled_events" value="*" checked[all]; "all events" }
                                                @for t in EVENT_TYPES {
                                                    label {
                                                        input type="checkbox" name="enabled_events" value=(t) checked[!all && e.enabled_events.iter().any(|x| x == t)];
                                                        code { (t) }
                                                    }
                                                }
                                            }
                                            button.primary.small type="submit" { "Save" }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The recent events, each with its deliveries and a resend button per endpoint.
fn recent_events_card(
    session: &Session,
    recent: &[(Value, Vec<Value>)],
    urls: &HashMap<String, String>,
) -> Markup {
    html! {
        section.card.table-card {
            h2.pad { "Recent events" }
            @if recent.is_empty() {
                (super::empty_state("No events yet."))
            } @else {
                table #recent-events {
                    thead { tr { th { "Event" } th { "Created" } th { "Deliveries" } } }
                    tbody {
                        @for (e, ds) in recent {
                            @let id = e["id"].as_str().unwrap_or_default();
                            tr {
                                td { a.mono href=(format!("/dashboard/events/{id}")) { (e["type"].as_str().unwrap_or_default()) } }
                                td.muted.date { (layout::when(e["created"].as_i64().unwrap_or_default())) }
                                td {
                                    @if ds.is_empty() { span.muted { "none" } }
                                    @for d in ds {
                                        @let endpoint = d["webhook_endpoint"].as_str().unwrap_or_default();
                                        div.delivery {
                                            (badge(d["status"].as_str().unwrap_or_default()))
                                            " " span.small { (endpoint_label(urls, endpoint)) }
                                            " " span.muted.small { (attempt_count(d)) }
                                            " " (resend_button(session, id, endpoint))
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

fn attempt_count(d: &Value) -> String {
    match d["attempts"].as_array().map(Vec::len).unwrap_or(0) {
        1 => "1 attempt".into(),
        n => format!("{n} attempts"),
    }
}

/// `GET /dashboard/webhooks`.
pub async fn list_endpoints(
    State(state): State<DashboardState>,
    session: Session,
    Query(q): Query<Done>,
) -> PageResult {
    let notice = match q.done.as_deref() {
        Some("enabled") => Notice::Success("The endpoint was enabled.".into()),
        Some("disabled") => Notice::Success("The endpoint was disabled.".into()),
        Some("deleted") => Notice::Success("The endpoint was deleted.".into()),
        Some("updated") => Notice::Success("The endpoint was updated.".into()),
        _ => Notice::None,
    };
    render_webhooks(
        &state,
        &session,
        StatusCode::OK,
        notice,
        None,
        Draft::default(),
    )
    .await
}

/// `POST /dashboard/webhooks`: adds an endpoint; the answer shows its secret once.
pub async fn create_endpoint(State(state): State<DashboardState>, posted: Posted) -> PageResult {
    let session = &posted.session;
    let mut events = posted.fields.all("enabled_events");
    if events.iter().any(|e| e == "*") {
        events = vec!["*".into()];
    }
    let draft = Draft {
        url: posted.fields.get("url").unwrap_or_default().to_string(),
        description: posted
            .fields
            .get("description")
            .unwrap_or_default()
            .to_string(),
        events: events.clone(),
    };
    let fields = EndpointFields {
        dialect: Default::default(),
        url: Some(draft.url.clone()),
        enabled_events: Some(events),
        description: Some(posted.fields.get("description").map(String::from)),
        disabled: None,
    };
    match state
        .services()
        .webhooks()
        .create_endpoint(&session.ctx(), fields)
        .await
    {
        Ok(created) => {
            let reveal = Reveal {
                url: created.endpoint.url,
                secret: created.secret,
            };
            let notice = Notice::Success("Endpoint added.".into());
            render_webhooks(
                &state,
                session,
                StatusCode::OK,
                notice,
                Some(reveal),
                Draft::default(),
            )
            .await
        }
        Err(e) => match user_message(&e) {
            Some(m) => {
                render_webhooks(
                    &state,
                    session,
                    StatusCode::BAD_REQUEST,
                    Notice::Error(m),
                    None,
                    draft,
                )
                .await
            }
            None => Err(e.into()),
        },
    }
}

/// `POST /dashboard/webhooks/{id}/edit`: URL, description and events.
pub async fn edit_endpoint(
    State(state): State<DashboardState>,
    Path(id): Path<String>,
    posted: Posted,
) -> PageResult {
    let mut events = posted.fields.all("enabled_events");
    if events.iter().any(|e| e == "*") {
        events = vec!["*".into()];
    }
    let fields = EndpointFields {
        dialect: Default::default(),
        url: posted.fields.get("url").map(String::from),
        enabled_events: Some(events),
        description: Some(posted.fields.get("description").map(String::from)),
        disabled: None,
    };
    match state
        .services()
        .webhooks()
        .update_endpoint(&posted.session.ctx(), &id, fields)
        .await
    {
        Ok(_) => Ok(see_other("/dashboard/webhooks?done=updated")),
        Err(e @ CoreError::NotFound { .. }) => Err(e.into()),
        Err(e) => match user_message(&e) {
            Some(m) => {
                render_webhooks(
                    &state,
                    &posted.session,
                    StatusCode::BAD_REQUEST,
                    Notice::Error(m),
                    None,
                    Draft::default(),
                )
                .await
            }
            None => Err(e.into()),
        },
    }
}

/// `POST /dashboard/webhooks/{id}/roll`: a new signing secret, shown once; the old one keeps
/// signing for 24 hours, so receivers can switch at their own pace.
pub async fn roll_endpoint_secret(
    State(state): State<DashboardState>,
    Path(id): Path<String>,
    posted: Posted,
) -> PageResult {
    let rolled = state
        .services()
        .webhooks()
        .roll_endpoint_secret(&posted.session.ctx(), &id, None)
        .await?;
    let reveal = Reveal {
        url: rolled.endpoint.url,
        secret: rolled.secret,
    };
    render_webhooks(
        &state,
        &posted.session,
        StatusCode::OK,
        Notice::Success("New secret made. The old one keeps signing for 24 hours.".into()),
        Some(reveal),
        Draft::default(),
    )
    .await
}

async fn set_disabled(
    state: &DashboardState,
    posted: &Posted,
    id: &str,
    disabled: bool,
) -> PageResult {
    let fields = EndpointFields {
        dialect: Default::default(),
        disabled: Some(disabled),
        ..EndpointFields::default()
    };
    state
        .services()
        .webhooks()
        .update_endpoint(&posted.session.ctx(), id, fields)
        .await?;
    let done = if disabled { "disabled" } else { "enabled" };
    Ok(see_other(&format!("/dashboard/webhooks?done={done}")))
}

/// `POST /dashboard/webhooks/{id}/enable`.
pub async fn enable_endpoint(
    State(state): State<DashboardState>,
    Path(id): Path<String>,
    posted: Posted,
) -> PageResult {
    set_disabled(&state, &posted, &id, false).await
}

/// `POST /dashboard/webhooks/{id}/disable`.
pub async fn disable_endpoint(
    State(state): State<DashboardState>,
    Path(id): Path<String>,
    posted: Posted,
) -> PageResult {
    set_disabled(&state, &posted, &id, true).await
}

/// `POST /dashboard/webhooks/{id}/delete`.
pub async fn delete_endpoint(
    State(state): State<DashboardState>,
    Path(id): Path<String>,
    posted: Posted,
) -> PageResult {
    state
        .services()
        .webhooks()
        .delete_endpoint(&posted.session.ctx(), &id)
        .await?;
    Ok(see_other("/dashboard/webhooks?done=deleted"))
}
