//! Disputes (CONTRACT §9): `/dashboard/disputes` lists them; each dispute's page shows what it
//! withholds, its balance transactions and the evidence form, with submit and accept.
//!
//! Every write goes through the same use cases as the API.

use super::auth::Done;
use super::balance::{newest, txn_table};
use super::layout::{
    badge, csrf_field, html_response, money, page, post_button, when, Notice, Section,
};
use super::{DashboardState, PageResult, Posted, Session};
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use maud::html;
use tender_core::balance::disputes::UpdateDispute;
use tender_core::balance::disputes::{Dispute, DisputeStatus, Evidence};
use tender_core::error::CoreError;
use tender_core::store::Collection;

/// `GET /dashboard/disputes`.
pub async fn list_disputes(State(state): State<DashboardState>, session: Session) -> PageResult {
    let disputes: Vec<Dispute> = newest(&state, &session, Collection::Disputes, 100).await?;
    let body = html! {
        section.card.table-card {
            @if disputes.is_empty() {
                (super::empty_state("No disputes. In test mode, a payment with the card 4000 0000 0000 0259 is disputed a moment after it captures."))
            } @else {
                table #disputes {
                    thead { tr { th.num { "Amount" } th { "Status" } th { "Payment" } th { "Respond by" } th { "Opened" } } }
                    tbody {
                        @for d in &disputes {
                            tr {
                                td.num { a href=(format!("/dashboard/disputes/{}", d.id)) { (money(d.amount, d.currency)) } br; span.mono.muted.small { (d.id) } }
                                td { (badge(d.status.as_str())) }
                                td.mono.small { a href=(format!("/dashboard/payments/{}", d.payment)) { (d.payment) } }
                                td.date { (when(d.evidence_details.due_by)) }
                                td.date { (when(d.created)) }
                            }
                        }
                    }
                }
            }
        }
    };
    Ok(html_response(
        StatusCode::OK,
        page(&session, Section::Disputes, "Disputes", &Notice::None, body),
    ))
}

async fn render_dispute(
    state: &DashboardState,
    session: &Session,
    id: &str,
    status: StatusCode,
    notice: Notice,
) -> PageResult {
    let d = state
        .services()
        .balance()
        .retrieve_dispute(&session.scope(), id)
        .await?;
    // A dispute opened at a connector's processor is answered there.
    let open = d.status == DisputeStatus::NeedsResponse && d.connector_reference.is_none();
    let e = &d.evidence;
    let field = |name: &str, label: &str, value: &Option<String>, long: bool| {
        html! {
            div.field {
                label for=(name) { (label) }
                @if long {
                    textarea id=(name) name=(name) rows="4" disabled[!open] { (value.as_deref().unwrap_or("")) }
                } @else {
                    input id=(name) type="text" name=(name) value=(value.as_deref().unwrap_or("")) disabled[!open];
                }
            }
        }
    };
    let body = html! {
        section.card #dispute {
            p { (badge(d.status.as_str())) " " strong { (money(d.amount, d.currency)) } " disputed as " (d.reason) " on payment "
                a.mono href=(format!("/dashboard/payments/{}", d.payment)) { (d.payment) } }
            p.muted { "Respond by " (when(d.evidence_details.due_by)) " · evidence submitted " (d.evidence_details.submission_count) " times" }
            (txn_table(&d.balance_transactions))
        }
        section.card {
            h2 { "Evidence" }
            form #evidence method="post" action=(format!("/dashboard/disputes/{}/evidence", d.id)) {
                (csrf_field(session))
                (field("customer_name", "Customer name", &e.customer_name, false))
                (field("customer_email_address", "Customer e-mail", &e.customer_email_address, false))
                (field("product_description", "Product description", &e.product_description, true))
                (field("uncategorized_text", "Other evidence", &e.uncategorized_text, true))
                @if open {
                    div.field.checks { label { input type="checkbox" name="submit" value="true"; "Submit the evidence now (it can no longer change)" } }
                    button.primary type="submit" { "Save evidence" }
                } @else if let Some(reference) = &d.connector_reference {
                    p.muted { "This dispute was opened at the connector's processor (" span.mono { (reference) } "): submit evidence or accept it there. Tender shows what the processor decides." }
                } @else {
                    p.muted { "This dispute no longer takes evidence." }
                }
            }
            @if open {
                h2 { "Accept the dispute" }
                p.muted.small { "The amount and the dispute fee stay withdrawn; the dispute is closed as lost." }
                (post_button(session, &format!("/dashboard/disputes/{}/close", d.id), "Accept the loss", "danger"))
            }
        }
    };
    Ok(html_response(
        status,
        page(
            session,
            Section::Disputes,
            &format!("Dispute {}", d.id),
            &notice,
            body,
        ),
    ))
}

/// `GET /dashboard/disputes/{id}`.
pub async fn retrieve_dispute(
    State(state): State<DashboardState>,
    session: Session,
    Path(id): Path<String>,
    Query(q): Query<Done>,
) -> PageResult {
    let notice = match q.done.as_deref() {
        Some("saved") => Notice::Success("Evidence saved.".into()),
        Some("submitted") => {
            Notice::Success("Evidence submitted: the dispute is under review.".into())
        }
        Some("closed") => Notice::Success("The dispute is closed as lost.".into()),
        _ => Notice::None,
    };
    render_dispute(&state, &session, &id, StatusCode::OK, notice).await
}

async fn after_dispute(
    state: &DashboardState,
    session: &Session,
    id: &str,
    result: Result<Dispute, CoreError>,
    done: &str,
) -> PageResult {
    super::answer_action(
        result,
        &format!("/dashboard/disputes/{id}?done={done}"),
        |notice| render_dispute(state, session, id, StatusCode::BAD_REQUEST, notice),
    )
    .await
}

/// `POST /dashboard/disputes/{id}/evidence`: every field as posted (an empty one clears it),
/// and `submit` when ticked.
pub async fn update_evidence(
    State(state): State<DashboardState>,
    Path(id): Path<String>,
    posted: Posted,
) -> PageResult {
    // A field emptied on the form clears it (`raw`: blank is a value here, not absent).
    let text = |name: &str| posted.fields.raw(name).map(|v| v.trim().to_string());
    let submit = posted.fields.get("submit") == Some("true");
    let cmd = UpdateDispute {
        evidence: Some(Evidence {
            customer_name: text("customer_name"),
            customer_email_address: text("customer_email_address"),
            product_description: text("product_description"),
            uncategorized_text: text("uncategorized_text"),
        }),
        metadata: None,
        submit,
    };
    let result = state
        .services()
        .balance()
        .update_dispute(&posted.session.ctx(), &id, cmd)
        .await;
    let done = if submit { "submitted" } else { "saved" };
    after_dispute(&state, &posted.session, &id, result, done).await
}

/// `POST /dashboard/disputes/{id}/close`.
pub async fn close_dispute(
    State(state): State<DashboardState>,
    Path(id): Path<String>,
    posted: Posted,
) -> PageResult {
    let result = state
        .services()
        .balance()
        .close_dispute(&posted.session.ctx(), &id)
        .await;
    after_dispute(&state, &posted.session, &id, result, "closed").await
}
