//! Connectors (CONTRACT §8): the processors this mode's payments go to, in routing order, with
//! add, enable/disable, reorder (priority), rotate the API key and delete. Secrets are entered,
//! never shown: only the key's last four characters are.

use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use maud::{html, Markup};
use tender_core::connectors::connector::{ConnectorObject, ConnectorStatus, ConnectorType};
use tender_core::connectors::service::{ChangedBy, ConnectorFields};
use tender_core::error::CoreError;
use tender_core::secret::Secret;
use tender_core::services::ListParams;
use tender_core::store::Collection;

use super::auth::Done;
use super::layout::{badge, csrf_field, html_response, page, post_button, Notice, Section};
use super::payments::parse_page;
use super::{see_other, DashError, DashboardState, PageResult, Posted, Session};

/// This mode's connectors in routing order (priority, then oldest).
async fn connectors(
    state: &DashboardState,
    session: &Session,
) -> Result<Vec<ConnectorObject>, DashError> {
    let raw = state
        .services()
        .list_raw(
            &session.scope(),
            Collection::Connectors,
            &ListParams {
                limit: 100,
                ..ListParams::default()
            },
            Vec::new(),
        )
        .await?;
    let mut all: Vec<ConnectorObject> = parse_page(&raw)?;
    all.reverse();
    all.sort_by_key(|c| c.priority);
    Ok(all)
}

/// The form that adds a connector. Where card data goes (`api_base`, `raw_card_data`) is the
/// operator's to set (CONTRACT §15): those fields appear only on a server started with
/// `--allow-connector-settings-via-api`.
fn add_form(session: &Session, operator_fields: bool) -> Markup {
    html! {
        form #add-connector method="post" action="/dashboard/connectors" {
            (csrf_field(session))
            div.field {
                label for="type" { "Processor" }
                select #type name="type" {
                    option value="stripe" { "Stripe" }
                    option value="simulator" { "Tender's simulator" }
                }
            }
            div.field {
                label for="name" { "Name" }
                input #name type="text" name="name" maxlength="200" placeholder="optional";
            }
            div.field {
                label for="api_key" { "Secret API key" }
                input #api_key type="password" name="api_key" autocomplete="off" placeholder="sk_test_… (Stripe)";
            }
            @if operator_fields {
                div.field {
                    label for="api_base" { "API address" }
                    input #api_base type="text" name="api_base" placeholder="default: the processor's public address";
                }
            }
            div.field {
                label for="webhook_secret" { "Webhook signing secret" }
                input #webhook_secret type="password" name="webhook_secret" autocomplete="off" placeholder="whsec_… (optional)";
            }
            div.field {
                label for="priority" { "Priority" }
                input #priority type="number" name="priority" min="0" value="0";
            }
            @if operator_fields {
                div.field.checks {
                    label { input type="checkbox" name="raw_card_data" value="true"; "Send card numbers to this processor (your PCI scope covers it)" }
                }
            } @else {
                p.muted { "A processor gets tokens only. Sending it card numbers, or another API address, is set by the operator of this Tender: " code { "tender connectors update --raw-card-data true" } "." }
            }
            button.primary type="submit" { "Add connector" }
        }
    }
}

async fn render_connectors(
    state: &DashboardState,
    session: &Session,
    status: StatusCode,
    notice: Notice,
) -> PageResult {
    let all = connectors(state, session).await?;
    let body = html! {
        section.card.table-card {
            h2.pad { "Connectors, in the order payments try them" }
            @if all.is_empty() {
                (super::empty_state("No connectors: this mode's payments go to Tender's built-in simulator."))
            } @else {
                table #connectors {
                    thead { tr { th { "Name" } th { "Processor" } th { "Priority" } th { "Status" } th { "Key" } th { "Card data" } th {} } }
                    tbody {
                        @for c in &all {
                            tr {
                                td {
                                    (c.name.as_deref().unwrap_or("—")) br;
                                    span.mono.muted.small { (c.id) }
                                }
                                td { (c.kind.as_str()) @if let Some(b) = &c.api_base { br; span.mono.small { (b) } } }
                                td { (c.priority) }
                                td { (badge(c.status.as_str())) }
                                td.mono { @if let Some(l) = &c.api_key_last4 { "…" (l) } @else { "—" } }
                                td {
                                    @if c.kind == ConnectorType::Simulator { "stays in Tender" }
                                    @else if c.raw_card_data { "sent" } @else { "tokens only" }
                                }
                                td.actions {
                                    @if c.status == ConnectorStatus::Enabled {
                                        (post_button(session, &format!("/dashboard/connectors/{}/disable", c.id), "Disable", "small"))
                                    } @else {
                                        (post_button(session, &format!("/dashboard/connectors/{}/enable", c.id), "Enable", "small"))
                                    }
                                    (post_button(session, &format!("/dashboard/connectors/{}/delete", c.id), "Delete", "small danger"))
                                    details.edit {
                                        summary { "Edit" }
                                        form method="post" action=(format!("/dashboard/connectors/{}/edit", c.id)) {
                                            (csrf_field(session))
                                            div.field { label { "Name" } input type="text" name="name" maxlength="200" value=(c.name.as_deref().unwrap_or("")); }
                                            div.field { label { "Priority" } input type="number" name="priority" min="0" value=(c.priority); }
                                            div.field { label { "New API key" } input type="password" name="api_key" autocomplete="off" placeholder="leave empty to keep"; }
                                            div.field { label { "New webhook secret" } input type="password" name="webhook_secret" autocomplete="off" placeholder="leave empty to keep"; }
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
        section.card {
            h2 { "Add a connector" }
            p.muted.small { "Secrets are stored encrypted and never shown again. A processor's payments fail over to the next connector only when it cannot be reached, never after a decline." }
            (add_form(session, state.services().config.connector_settings_via_api))
        }
    };
    Ok(html_response(
        status,
        page(session, Section::Connectors, "Connectors", &notice, body),
    ))
}

/// `GET /dashboard/connectors`.
pub async fn list_connectors(
    State(state): State<DashboardState>,
    session: Session,
    Query(q): Query<Done>,
) -> PageResult {
    let notice = match q.done.as_deref() {
        Some("added") => Notice::Success("Connector added.".into()),
        Some("enabled") => Notice::Success("The connector was enabled.".into()),
        Some("disabled") => Notice::Success("The connector was disabled.".into()),
        Some("deleted") => Notice::Success("The connector was deleted.".into()),
        Some("updated") => Notice::Success("The connector was updated.".into()),
        _ => Notice::None,
    };
    render_connectors(&state, &session, StatusCode::OK, notice).await
}

/// The priority field: a whole number, or a refusal naming it.
fn priority(posted: &Posted) -> Result<Option<i64>, CoreError> {
    posted
        .fields
        .get("priority")
        .map(|p| {
            p.parse::<i64>().map_err(|_| {
                CoreError::invalid(
                    "priority",
                    "parameter_invalid_integer",
                    "The priority must be a whole number.",
                )
            })
        })
        .transpose()
}

async fn answer(
    state: &DashboardState,
    session: &Session,
    result: Result<ConnectorObject, CoreError>,
    done: &str,
) -> PageResult {
    super::answer_action(
        result,
        &format!("/dashboard/connectors?done={done}"),
        |notice| render_connectors(state, session, StatusCode::BAD_REQUEST, notice),
    )
    .await
}

/// `POST /dashboard/connectors`.
pub async fn create_connector(State(state): State<DashboardState>, posted: Posted) -> PageResult {
    let result = match priority(&posted) {
        Ok(priority) => {
            let fields = ConnectorFields {
                kind: posted.fields.get("type").map(String::from),
                name: Some(posted.fields.get("name").map(String::from)),
                api_key: posted.fields.get("api_key").map(Secret::from),
                api_base: posted.fields.get("api_base").map(String::from),
                webhook_secret: posted
                    .fields
                    .get("webhook_secret")
                    .map(|s| Some(Secret::from(s))),
                priority,
                raw_card_data: Some(posted.fields.get("raw_card_data") == Some("true"))
                    .filter(|raw| *raw || posted.fields.get("type") != Some("simulator")),
                disabled: None,
                metadata: None,
            };
            state
                .services()
                .connectors()
                .create_connector(&posted.session.ctx(), fields, ChangedBy::Merchant)
                .await
        }
        Err(e) => Err(e),
    };
    answer(&state, &posted.session, result, "added").await
}

/// `POST /dashboard/connectors/{id}/edit`: name, priority, and secrets when given.
pub async fn edit_connector(
    State(state): State<DashboardState>,
    Path(id): Path<String>,
    posted: Posted,
) -> PageResult {
    let result = match priority(&posted) {
        Ok(priority) => {
            let fields = ConnectorFields {
                name: Some(posted.fields.get("name").map(String::from)),
                api_key: posted.fields.get("api_key").map(Secret::from),
                webhook_secret: posted
                    .fields
                    .get("webhook_secret")
                    .map(|s| Some(Secret::from(s))),
                priority,
                ..ConnectorFields::default()
            };
            state
                .services()
                .connectors()
                .update_connector(&posted.session.ctx(), &id, fields, ChangedBy::Merchant)
                .await
        }
        Err(e) => Err(e),
    };
    answer(&state, &posted.session, result, "updated").await
}

async fn set_disabled(
    state: &DashboardState,
    posted: &Posted,
    id: &str,
    disabled: bool,
) -> PageResult {
    let fields = ConnectorFields {
        disabled: Some(disabled),
        ..ConnectorFields::default()
    };
    let result = state
        .services()
        .connectors()
        .update_connector(&posted.session.ctx(), id, fields, ChangedBy::Merchant)
        .await;
    let done = if disabled { "disabled" } else { "enabled" };
    answer(state, &posted.session, result, done).await
}

/// `POST /dashboard/connectors/{id}/enable`.
pub async fn enable_connector(
    State(state): State<DashboardState>,
    Path(id): Path<String>,
    posted: Posted,
) -> PageResult {
    set_disabled(&state, &posted, &id, false).await
}

/// `POST /dashboard/connectors/{id}/disable`.
pub async fn disable_connector(
    State(state): State<DashboardState>,
    Path(id): Path<String>,
    posted: Posted,
) -> PageResult {
    set_disabled(&state, &posted, &id, true).await
}

/// `POST /dashboard/connectors/{id}/delete`.
pub async fn delete_connector(
    State(state): State<DashboardState>,
    Path(id): Path<String>,
    posted: Posted,
) -> PageResult {
    state
        .services()
        .connectors()
        .delete_connector(&posted.session.ctx(), &id)
        .await?;
    Ok(see_other("/dashboard/connectors?done=deleted"))
}
