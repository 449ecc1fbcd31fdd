//! Checkout (CONTRACT §14): `/dashboard/checkout` shows the card-testing guard's blocks in the
//! current mode (its `risk.blocked` events, newest first) and the account's settings of its
//! public card surfaces — the decline limits and the shop origins that may frame the card
//! field — with the form that changes them.
//!
//! The settings are written through the accounts use case, which checks them.

use axum::extract::{Query, State};
use axum::http::StatusCode;
use maud::{html, Markup};
use serde_json::Value;
use tender_core::accounts::checkout_settings::{CheckoutSettings, MAX_FRAME_ORIGINS, MAX_LIMIT};
use tender_core::risk::block::RiskBlock;
use tender_core::services::ListParams;
use tender_core::store::{Collection, Field};

use super::auth::Done;
use super::layout::{csrf_field, html_response, page, when, Notice, Section};
use super::payments::parse_page;
use super::{see_other, user_message, DashboardState, PageResult, Posted, Session};

/// Blocks the page lists.
const SHOWN_BLOCKS: u32 = 50;

/// `GET /dashboard/checkout`.
pub async fn checkout_page(
    State(state): State<DashboardState>,
    session: Session,
    Query(q): Query<Done>,
) -> PageResult {
    let notice = match q.done.as_deref() {
        Some("settings") => {
            Notice::Success("Saved. The limits and origins apply from the next try.".into())
        }
        _ => Notice::None,
    };
    let settings = state
        .services()
        .accounts()
        .checkout_settings(&session.record.account)
        .await?;
    render(&state, &session, StatusCode::OK, notice, &settings).await
}

/// `POST /dashboard/checkout/settings`.
pub async fn update_settings(State(state): State<DashboardState>, posted: Posted) -> PageResult {
    let f = &posted.fields;
    let limit = |name: &str| {
        f.get(name)
            .and_then(|v| v.trim().parse::<u32>().ok())
            .unwrap_or(0)
    };
    let settings = CheckoutSettings {
        declines_per_address: limit("declines_per_address"),
        declines_per_card: limit("declines_per_card"),
        declines_per_session: limit("declines_per_session"),
        frame_origins: f
            .get("frame_origins")
            .unwrap_or("")
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|o| !o.is_empty())
            .map(str::to_string)
            .collect(),
    };
    let account = &posted.session.record.account;
    match state
        .services()
        .accounts()
        .set_checkout_settings(account, settings.clone())
        .await
    {
        Ok(_) => Ok(see_other("/dashboard/checkout?done=settings")),
        Err(e) => match user_message(&e) {
            Some(message) => {
                render(
                    &state,
                    &posted.session,
                    StatusCode::BAD_REQUEST,
                    Notice::Error(message),
                    &settings,
                )
                .await
            }
            None => Err(e.into()),
        },
    }
}

async fn render(
    state: &DashboardState,
    session: &Session,
    status: StatusCode,
    notice: Notice,
    settings: &CheckoutSettings,
) -> PageResult {
    let blocks = blocks(state, session).await?;
    let body = html! {
        section.card.table-card #blocks {
            h2 { "Blocked card testing" }
            @if blocks.is_empty() {
                (super::empty_state("Nothing blocked. When a client address, a card or a Checkout Session reaches its limit of declines, further tries are refused and listed here."))
            } @else {
                (block_table(&blocks))
            }
        }
        (settings_form(session, settings))
    };
    Ok(html_response(
        status,
        page(session, Section::Checkout, "Checkout", &notice, body),
    ))
}

/// The mode's `risk.blocked` events' blocks, newest first.
async fn blocks(
    state: &DashboardState,
    session: &Session,
) -> Result<Vec<RiskBlock>, super::DashError> {
    let raw = state
        .services()
        .list_raw(
            &session.scope(),
            Collection::Events,
            &ListParams {
                limit: SHOWN_BLOCKS,
                ..ListParams::default()
            },
            vec![(Field::Type, "risk.blocked".to_string())],
        )
        .await?;
    let events: Vec<Value> = parse_page(&raw)?;
    Ok(events
        .into_iter()
        .filter_map(|e| serde_json::from_value(e["data"]["object"].clone()).ok())
        .collect())
}

fn block_table(blocks: &[RiskBlock]) -> Markup {
    html! {
        table {
            thead { tr { th { "Blocked" } th { "Why" } th { "Where" } th { "Client address" } th { "Card" } th { "Until" } } }
            tbody {
                @for b in blocks {
                    tr {
                        td.date { (when(b.created)) }
                        td { (reason_words(b)) }
                        td {
                            (surface_words(b))
                            @if let Some(r) = &b.reference { br; span.mono.muted.small { (r) } }
                        }
                        td.mono.small { (b.client_address.as_deref().unwrap_or("—")) }
                        td.mono.small { (b.card_fingerprint) }
                        td { @match b.blocked_until { Some(t) => (when(t)), None => "this session" } }
                    }
                }
            }
        }
    }
}

fn reason_words(b: &RiskBlock) -> String {
    use tender_core::risk::BlockReason::*;
    let declines = match b.limit {
        1 => "1 decline".to_string(),
        n => format!("{n} declines"),
    };
    match b.reason {
        DeclinesPerAddress => format!("{declines} from one address in an hour"),
        DeclinesPerCard => format!("{declines} of one card in an hour"),
        DeclinesPerSession => format!("{declines} in one Checkout Session"),
    }
}

fn surface_words(b: &RiskBlock) -> &'static str {
    use tender_core::risk::Surface::*;
    match b.surface {
        CheckoutPage => "Checkout page",
        InvoicePage => "Hosted invoice page",
        Api => "tender.js / publishable key",
    }
}

fn settings_form(session: &Session, s: &CheckoutSettings) -> Markup {
    let number = |name: &str, label: &str, value: u32| {
        html! {
            div.field {
                label for=(name) { (label) }
                input id=(name) type="number" name=(name) min="1" max=(MAX_LIMIT) value=(value) required;
            }
        }
    };
    html! {
        section.card #checkout-settings {
            h2 { "Card-testing limits and the card field" }
            p.muted { "These apply to both modes. Declines are counted per client address and per card over the last hour, on the hosted Checkout and invoice pages and on intents a browser confirms with your publishable key." }
            form method="post" action="/dashboard/checkout/settings" {
                (csrf_field(session))
                (number("declines_per_address", "Declines from one client address, per hour", s.declines_per_address))
                (number("declines_per_card", "Declines of one card, per hour", s.declines_per_card))
                (number("declines_per_session", "Declines in one Checkout Session", s.declines_per_session))
                div.field {
                    label for="frame_origins" { "Shop origins that may show the card field (one per line; empty: any page)" }
                    textarea #frame_origins name="frame_origins" rows="3" placeholder="https://shop.example" {
                        (s.frame_origins.join("\n"))
                    }
                    p.muted.small { "At most " (MAX_FRAME_ORIGINS) ", like https://shop.example or https://shop.example:8443 (http:// only for localhost)." }
                }
                button.primary type="submit" { "Save" }
            }
        }
    }
}
