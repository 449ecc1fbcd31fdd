//! The dashboard's frame and shared pieces: the page template with navigation and the test/live
//! switch, error pages, notices, status badges, the pager, small forms, and the stylesheet
//! (hand-written, served by the binary at `/dashboard/static/style.css`).
//!
//! All markup is `maud`, which escapes every interpolated value.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use chrono_tz::Tz;
use maud::{html, Markup, DOCTYPE};
use tender_core::auth::Mode;
use tender_core::money::{format_amount, Currency};

use super::Session;

/// The areas in the navigation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    Overview,
    Payments,
    Balance,
    Disputes,
    Customers,
    Billing,
    Checkout,
    Webhooks,
    Connectors,
    Keys,
    Account,
}

impl Section {
    const NAV: [Section; 11] = [
        Section::Overview,
        Section::Payments,
        Section::Balance,
        Section::Disputes,
        Section::Customers,
        Section::Billing,
        Section::Checkout,
        Section::Webhooks,
        Section::Connectors,
        Section::Keys,
        Section::Account,
    ];

    pub fn path(self) -> &'static str {
        match self {
            Section::Overview => "/dashboard/overview",
            Section::Payments => "/dashboard/payments",
            Section::Balance => "/dashboard/balance",
            Section::Disputes => "/dashboard/disputes",
            Section::Customers => "/dashboard/customers",
            Section::Billing => "/dashboard/subscriptions",
            Section::Checkout => "/dashboard/checkout",
            Section::Webhooks => "/dashboard/webhooks",
            Section::Connectors => "/dashboard/connectors",
            Section::Keys => "/dashboard/keys",
            Section::Account => "/dashboard/account",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Section::Overview => "Overview",
            Section::Payments => "Payments",
            Section::Balance => "Balance",
            Section::Disputes => "Disputes",
            Section::Customers => "Customers",
            Section::Billing => "Billing",
            Section::Checkout => "Checkout",
            Section::Webhooks => "Webhooks",
            Section::Connectors => "Connectors",
            Section::Keys => "API keys",
            Section::Account => "Account",
        }
    }
}

/// A message at the top of a page: what an action did, or why it could not.
#[derive(Debug, Clone, Default)]
pub enum Notice {
    #[default]
    None,
    Success(String),
    Error(String),
}

impl maud::Render for Notice {
    fn render(&self) -> Markup {
        match self {
            Notice::None => html! {},
            Notice::Success(text) => html! { div.notice.success role="status" { (text) } },
            Notice::Error(text) => html! { div.notice.error role="alert" { (text) } },
        }
    }
}

fn head(title: &str) -> Markup {
    html! {
        head {
            meta charset="utf-8";
            meta name="viewport" content="width=device-width, initial-scale=1";
            title { (title) " · Tender" }
            link rel="stylesheet" href="/dashboard/static/style.css";
        }
    }
}

/// A full page for a logged-in session: header with navigation, the test/live switch and log
/// out, a test-mode band, the notice, the title and `body`.
pub fn page(
    session: &Session,
    section: Section,
    title: &str,
    notice: &Notice,
    body: Markup,
) -> Markup {
    let mode = session.mode();
    let other = match mode {
        Mode::Test => Mode::Live,
        Mode::Live => Mode::Test,
    };
    html! {
        (DOCTYPE)
        html lang="en" {
            (head(title))
            body class=(format!("mode-{}", mode.as_str())) {
                @if mode == Mode::Test {
                    div.testband { "Test mode: you are looking at test data" }
                } @else {
                    // Without a live-mode connector (CONTRACT §8) live mode charges nobody:
                    // the built-in simulator approves every valid card.
                    div.liveband role="alert" {
                        strong { "Live mode moves money only through a connector." }
                        " Without a live-mode connector to a payment processor, live payments are approved by Tender's built-in simulator and no card is charged."
                    }
                }
                header.top {
                    div.bar {
                        a.brand href="/dashboard/payments" { "Tender" }
                        nav {
                            @for s in Section::NAV {
                                a href=(s.path()) class=[(s == section).then_some("active")] { (s.label()) }
                            }
                        }
                        div.session {
                            form.inline method="post" action="/dashboard/mode" {
                                (csrf_field(session))
                                input type="hidden" name="mode" value=(other.as_str());
                                input type="hidden" name="return_to" value=(section.path());
                                span class=(format!("pill {}", mode.as_str())) { (mode.as_str().to_uppercase()) }
                                button.link type="submit" { "Switch to " (other.as_str()) }
                            }
                            form.inline method="post" action="/dashboard/logout" {
                                (csrf_field(session))
                                button.link type="submit" { "Log out" }
                            }
                        }
                    }
                }
                main {
                    h1 { (title) }
                    (notice)
                    (body)
                }
            }
        }
    }
}

/// A page without navigation: the login page and error pages.
pub fn bare_page(title: &str, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            (head(title))
            body.bare {
                main.narrow {
                    div.brand-big { "Tender" }
                    (body)
                }
            }
        }
    }
}

/// An HTML response.
pub fn html_response(status: StatusCode, markup: Markup) -> Response {
    (status, Html(markup.into_string())).into_response()
}

/// An error page (403, 404, 500 …) with a way back.
pub fn error_page(status: StatusCode, title: &str, message: &str) -> Response {
    html_response(
        status,
        bare_page(
            title,
            html! {
                section.card {
                    h1 { (title) }
                    p { (message) }
                    p { a href="/dashboard" { "Back to the dashboard" } }
                }
            },
        ),
    )
}

/// The hidden CSRF field every form of a session carries.
pub fn csrf_field(session: &Session) -> Markup {
    html! { input type="hidden" name="csrf_token" value=(session.record.csrf_token); }
}

/// A form with a single button that POSTs to `action`.
pub fn post_button(session: &Session, action: &str, label: &str, class: &str) -> Markup {
    html! {
        form.inline method="post" action=(action) {
            (csrf_field(session))
            button type="submit" class=(class) { (label) }
        }
    }
}

/// A coloured badge for a status word.
pub fn badge(status: &str) -> Markup {
    let tone = match status {
        "succeeded" | "enabled" | "active" => "good",
        "failed" | "revoked" | "expired" => "bad",
        "requires_capture" | "requires_action" | "pending" | "expiring" => "warn",
        "processing" => "info",
        _ => "neutral",
    };
    html! { span class=(format!("badge {tone}")) { (status.replace('_', " ")) } }
}

pub fn money(minor: i64, currency: Currency) -> String {
    format_amount(minor, currency)
}

tokio::task_local! {
    /// The viewer's chosen time zone, for the request being rendered (set by
    /// [`with_viewer_zone`] from the `tender_tz` cookie).
    static VIEWER_ZONE: Tz;
}

/// The cookie that keeps the viewer's time zone (an IANA name, `Europe/Berlin`).
pub const TZ_COOKIE: &str = "tender_tz";

/// The zones a viewer may choose: `UTC` and every IANA `Area/City` zone (no `Etc/…` and no
/// legacy aliases such as `US/Pacific`), by name.
pub fn zone_choices() -> Vec<Tz> {
    const AREAS: [&str; 10] = [
        "Africa/",
        "America/",
        "Antarctica/",
        "Arctic/",
        "Asia/",
        "Atlantic/",
        "Australia/",
        "Europe/",
        "Indian/",
        "Pacific/",
    ];
    let mut zones: Vec<Tz> = chrono_tz::TZ_VARIANTS
        .iter()
        .copied()
        .filter(|z| AREAS.iter().any(|a| z.name().starts_with(a)))
        .collect();
    zones.sort_by_key(|z| z.name());
    zones.insert(0, Tz::UTC);
    zones
}

/// The zone named `name`, if a viewer may choose it.
pub fn parse_zone(name: &str) -> Option<Tz> {
    let zone: Tz = name.parse().ok()?;
    zone_choices().contains(&zone).then_some(zone)
}

/// Middleware: renders the request's times in the zone of its `tender_tz` cookie (UTC when
/// it has none, or one that is no zone).
pub async fn with_viewer_zone(
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let zone = super::cookie_value(req.headers(), TZ_COOKIE)
        .and_then(|v| parse_zone(&v))
        .unwrap_or(Tz::UTC);
    VIEWER_ZONE.scope(zone, next.run(req)).await
}

/// The zone of the request being rendered (UTC outside a dashboard request).
pub fn viewer_zone() -> Tz {
    VIEWER_ZONE.try_with(|z| *z).unwrap_or(Tz::UTC)
}

/// `unix` in `zone` as a viewer reads it: date, time to the second, and the zone's abbreviation
/// at that moment (`CET` in winter, `CEST` in summer).
pub fn format_in(unix: i64, zone: Tz) -> String {
    use chrono::TimeZone;
    match zone.timestamp_opt(unix, 0).single() {
        Some(t) => t.format("%Y-%m-%d %H:%M:%S %Z").to_string(),
        None => format!("{} UTC", tender_core::clock::format_local(unix, 0)),
    }
}

/// When the day `y-m-d` starts in `zone` (its first moment, where summer time skips midnight).
pub fn day_start(zone: Tz, y: i32, m: u32, d: u32) -> Option<i64> {
    use chrono::TimeZone;
    zone.with_ymd_and_hms(y, m, d, 0, 0, 0)
        .earliest()
        .or_else(|| zone.with_ymd_and_hms(y, m, d, 1, 0, 0).earliest())
        .map(|t| t.timestamp())
}

/// A time as the viewer reads it, in the zone they chose.
pub fn when(unix: i64) -> String {
    format_in(unix, viewer_zone())
}

/// Older/newer links for a newest-first list, keeping the page's filters.
///
/// `filters` are the query pairs to keep; `first`/`last` are the ids on this page; `has_more`
/// is the store's answer in the direction the page was read.
pub fn pager(
    path: &str,
    filters: &[(&str, &str)],
    first: Option<&str>,
    last: Option<&str>,
    has_more: bool,
    read_backwards: bool,
    read_forwards: bool,
) -> Markup {
    let link = |cursor: &str, id: &str| {
        let mut q = form_urlencoded::Serializer::new(String::new());
        for (k, v) in filters {
            if !v.is_empty() {
                q.append_pair(k, v);
            }
        }
        q.append_pair(cursor, id);
        format!("{path}?{}", q.finish())
    };
    // Reading backwards (ending_before), `has_more` says whether newer rows exist; otherwise
    // whether older ones do.
    let newer = if read_backwards {
        has_more
    } else {
        read_forwards
    };
    let older = if read_backwards { true } else { has_more };
    html! {
        nav.pager {
            @if let (true, Some(id)) = (newer, first) {
                a.button href=(link("ending_before", id)) { "← Newer" }
            }
            @if let (true, Some(id)) = (older, last) {
                a.button href=(link("starting_after", id)) { "Older →" }
            }
        }
    }
}

/// Adds the dashboard's security headers to every response it makes.
pub async fn security_headers(mut resp: Response) -> Response {
    let h = resp.headers_mut();
    if !h.contains_key(header::CACHE_CONTROL) {
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    h.insert("x-frame-options", HeaderValue::from_static("DENY"));
    h.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; \
             frame-ancestors 'none'; base-uri 'none'",
        ),
    );
    resp
}

/// `GET /dashboard/static/style.css`.
pub async fn stylesheet() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/css; charset=utf-8"),
            (header::CACHE_CONTROL, "public, max-age=3600"),
        ],
        STYLESHEET,
    )
        .into_response()
}

const STYLESHEET: &str = include_str!("style.css");

#[cfg(test)]
mod tests {
    use super::*;

    fn links(m: Markup) -> Vec<String> {
        m.into_string()
            .split("href=\"")
            .skip(1)
            .filter_map(|s| s.split('"').next().map(|h| h.replace("&amp;", "&")))
            .collect()
    }

    #[test]
    fn the_first_page_links_only_to_older_rows() {
        let m = pager(
            "/p",
            &[("status", "failed"), ("customer", "")],
            Some("a"),
            Some("b"),
            true,
            false,
            false,
        );
        assert_eq!(links(m), vec!["/p?status=failed&starting_after=b"]);
    }

    #[test]
    fn a_middle_page_links_both_ways_and_the_last_only_back() {
        let m = pager("/p", &[], Some("a"), Some("b"), true, false, true);
        assert_eq!(links(m), vec!["/p?ending_before=a", "/p?starting_after=b"]);
        let m = pager("/p", &[], Some("a"), Some("b"), false, false, true);
        assert_eq!(links(m), vec!["/p?ending_before=a"]);
        // Read backwards from an older page: older rows exist; newer only if has_more.
        let m = pager("/p", &[], Some("a"), Some("b"), false, true, false);
        assert_eq!(links(m), vec!["/p?starting_after=b"]);
    }

    #[test]
    fn badges_escape_and_name_their_tone() {
        let m = badge("<b>").into_string();
        assert!(m.contains("&lt;b&gt;") && m.contains("neutral"));
        assert!(badge("requires_capture")
            .into_string()
            .contains("requires capture"));
    }
}
