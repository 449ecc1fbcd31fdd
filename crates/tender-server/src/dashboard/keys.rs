//! API keys of the session's mode: list (secret keys by their last four, publishable keys in
//! full), create (the secret shown once, on the page the POST answers, never in a URL), roll with
//! a grace period of up to seven days, revoke.

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use maud::{html, Markup};
use tender_core::auth::KeyKind;
use tender_core::error::CoreError;
use tender_core::store::ApiKeyRecord;

use super::auth::Done;
use super::layout::{self, badge, csrf_field, html_response, page, post_button, Notice, Section};
use super::{see_other, DashError, DashboardState, PageResult, Posted, Session};

/// The grace periods offered when rolling a key (seconds, label).
const GRACE_CHOICES: [(i64, &str); 5] = [
    (0, "old key ends now"),
    (3600, "old key works 1 h"),
    (86_400, "old key works 24 h"),
    (3 * 86_400, "old key works 3 days"),
    (7 * 86_400, "old key works 7 days"),
];

/// A key that was just made, to show once.
struct Reveal {
    heading: String,
    key: String,
    note: String,
}

fn key_status(k: &ApiKeyRecord, now: i64) -> &'static str {
    match k.expires_at {
        _ if k.revoked => "revoked",
        Some(at) if at <= now => "expired",
        Some(_) => "expiring",
        None => "active",
    }
}

fn shown_key(k: &ApiKeyRecord) -> String {
    match &k.public_value {
        Some(full) => full.clone(),
        None => format!("sk_{}_…{}", k.mode.as_str(), k.last4),
    }
}

fn key_row(session: &Session, k: &ApiKeyRecord, now: i64) -> Markup {
    let status = key_status(k, now);
    html! {
        tr {
            td { (k.kind.as_str()) }
            td.mono { (shown_key(k)) }
            td.date { (layout::when(k.created)) }
            td {
                (badge(status))
                @if let (Some(at), "expiring") = (k.expires_at, status) {
                    " " span.muted.small { "until " (layout::when(at)) }
                }
            }
            td.actions {
                @if matches!(status, "active" | "expiring") {
                    @if status == "active" {
                        form.inline method="post" action=(format!("/dashboard/keys/{}/roll", k.id)) {
                            (csrf_field(session))
                            select name="grace" aria-label="When the old key stops working" {
                                @for (secs, label) in GRACE_CHOICES {
                                    option value=(secs) selected[secs == 86_400] { (label) }
                                }
                            }
                            " "
                            button.small type="submit" { "Roll" }
                        }
                    }
                    (post_button(session, &format!("/dashboard/keys/{}/revoke", k.id), "Revoke", "small danger"))
                }
            }
        }
    }
}

async fn render_keys(
    state: &DashboardState,
    session: &Session,
    status: StatusCode,
    notice: Notice,
    reveal: Option<Reveal>,
) -> PageResult {
    let now = state.services().now();
    // Newest first, ties by id descending: the store's order, the same the CLI lists.
    let keys: Vec<ApiKeyRecord> = state
        .services()
        .store
        .list_api_keys(&session.record.account)
        .await
        .map_err(CoreError::from)?
        .into_iter()
        .filter(|k| k.mode == session.mode())
        .collect();
    let body = html! {
        @if let Some(r) = &reveal {
            div.reveal {
                h2 { (r.heading) }
                p { "Copy it now: it is shown only this once." }
                code.secret #new-key { (r.key) }
                p.muted.small { (r.note) }
            }
        }
        section.card {
            h2 { "Create a key" }
            form.row method="post" action="/dashboard/keys" {
                (csrf_field(session))
                select name="kind" aria-label="Kind of key" {
                    option value="secret" { "Secret key" }
                    option value="publishable" { "Publishable key" }
                }
                button.primary type="submit" { "Create " (session.mode().as_str()) " key" }
            }
            p.muted.small {
                "Secret keys can do everything in their mode; publishable keys can only turn card "
                "details into payment methods, from a customer's browser."
            }
        }
        section.card.table-card {
            h2.pad { (if session.mode().is_live() { "Live keys" } else { "Test keys" }) }
            @if keys.is_empty() {
                (super::empty_state("No keys in this mode."))
            } @else {
                table #keys {
                    thead { tr { th { "Kind" } th { "Key" } th { "Created" } th { "Status" } th {} } }
                    tbody { @for k in &keys { (key_row(session, k, now)) } }
                }
            }
        }
    };
    Ok(html_response(
        status,
        page(session, Section::Keys, "API keys", &notice, body),
    ))
}

/// `GET /dashboard/keys`.
pub async fn list_keys(
    State(state): State<DashboardState>,
    session: Session,
    Query(q): Query<Done>,
) -> PageResult {
    let notice = match q.done.as_deref() {
        Some("revoked") => Notice::Success("The key was revoked.".into()),
        _ => Notice::None,
    };
    render_keys(&state, &session, StatusCode::OK, notice, None).await
}

/// `POST /dashboard/keys`: a new key; the answer shows it once.
pub async fn create_key(State(state): State<DashboardState>, posted: Posted) -> PageResult {
    let kind = match posted.fields.get("kind") {
        Some("secret") | None => KeyKind::Secret,
        Some("publishable") => KeyKind::Publishable,
        Some(_) => return Err(DashError::BadRequest("Unknown kind of key.".into())),
    };
    let session = &posted.session;
    let (key, _) = state
        .services()
        .accounts()
        .create_api_key(&session.record.account, session.mode(), kind)
        .await?;
    let reveal = Reveal {
        heading: format!("Your new {} key", kind.as_str()),
        key,
        note: "It works at once.".into(),
    };
    render_keys(&state, session, StatusCode::OK, Notice::None, Some(reveal)).await
}

/// `POST /dashboard/keys/{id}/roll`: a replacement; the old key works for the chosen grace.
pub async fn roll_key(
    State(state): State<DashboardState>,
    Path(id): Path<String>,
    posted: Posted,
) -> PageResult {
    let session = &posted.session;
    let grace: i64 = match posted.fields.get("grace").map(str::parse) {
        Some(Ok(g)) => g,
        None => 86_400,
        Some(Err(_)) => return Err(DashError::BadRequest("Choose a grace period.".into())),
    };
    match state
        .services()
        .accounts()
        .roll_api_key(&session.record.account, &id, grace)
        .await
    {
        Ok((key, _)) => {
            let note = if grace == 0 {
                "The old key stopped working.".to_string()
            } else {
                format!(
                    "The old key keeps working until {}.",
                    layout::when(state.services().now() + grace)
                )
            };
            let reveal = Reveal {
                heading: "Your new key".into(),
                key,
                note,
            };
            render_keys(&state, session, StatusCode::OK, Notice::None, Some(reveal)).await
        }
        Err(e @ CoreError::InvalidParam { .. }) => {
            let notice = Notice::Error(e.to_string());
            render_keys(&state, session, StatusCode::BAD_REQUEST, notice, None).await
        }
        Err(e) => Err(e.into()),
    }
}

/// `POST /dashboard/keys/{id}/revoke`.
pub async fn revoke_key(
    State(state): State<DashboardState>,
    Path(id): Path<String>,
    posted: Posted,
) -> PageResult {
    state
        .services()
        .accounts()
        .revoke_api_key(&posted.session.record.account, &id)
        .await?;
    Ok(see_other("/dashboard/keys?done=revoked"))
}
