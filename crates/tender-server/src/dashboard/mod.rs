//! The dashboard at `/dashboard`: server-rendered HTML for account holders, usable without
//! JavaScript (plain forms, POST-redirect-GET).
//!
//! # Layout
//! - this module: the router, [`DashboardState`], the [`Session`] extractor (session cookie →
//!   live session → scope), the [`Posted`] extractor (form fields of a POST, after a
//!   constant-time CSRF check) and [`DashError`], which turns every failure into an HTML page.
//! - [`layout`]: the page frame, navigation, stylesheet and small formatting helpers.
//! - [`throttle`]: login throttling per e-mail, client address and both, in memory.
//! - [`overview`]: the landing page: 30-day figures, a daily chart, search.
//! - [`auth`]: log in, log out, change password, the test/live switch.
//! - [`keys`], [`payments`] (its actions in [`payment_actions`]), [`customers`], [`webhooks`],
//!   [`connectors`]: one module per area; [`balance`]: the balance, its transactions and chart,
//!   payouts and disputes; [`billing`]: subscriptions, invoices, products and prices;
//!   [`checkout`]: the card-testing guard's blocks and the public card surfaces' settings.
//!
//! Every read and write goes through the same use cases as the API, with a [`RequestContext`]
//! built from the session's account and mode: a session cannot name another account's data.
//!
//! # Security
//! - The session cookie is `HttpOnly; SameSite=Strict; Path=/dashboard` with the session's
//!   `Max-Age`, plus `Secure` when the server says it is reached over TLS
//!   (`ServerConfig::secure_cookies`). Only the token's hash is stored.
//! - Every form carries a CSRF token in a hidden field: the session's `csrf_token`, compared in
//!   constant time on every POST (403 page when it is missing or wrong). The login form, which
//!   has no session yet, uses a double-submit cookie instead.
//! - Pages are `no-store`, may not be framed, and run no script (`Content-Security-Policy`).
//!
//! Depends on `tender-core` use cases, `maud` for auto-escaping templates and `axum`.

pub mod auth;
pub mod balance;
pub mod billing;
mod checkout;
pub mod connectors;
pub mod customers;
mod disputes;
mod events;
pub mod keys;
pub mod layout;
mod names;
pub mod overview;
mod payment_actions;
mod payment_page;
mod payments;
mod products;
pub mod throttle;
pub mod webhooks;

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::Router;
use maud::html;
use tender_core::auth::{secrets_equal, KeyKind, Mode, Principal, Scope};
use tender_core::error::CoreError;
use tender_core::services::{ListParams, RequestContext, Services};
use tender_core::store::SessionRecord;
use tender_core::store::{Collection, Field};

use crate::http::error::current_request_id;
use crate::state::AppState;
use throttle::LoginThrottle;

/// Name of the session cookie.
pub const SESSION_COOKIE: &str = "tender_session";
/// Name of the login form's double-submit CSRF cookie.
pub const LOGIN_COOKIE: &str = "tender_login";
/// Largest form body the dashboard reads.
const MAX_FORM: usize = 64 * 1024;
/// Rows per list page.
pub const PAGE_SIZE: u32 = 20;

/// What the dashboard's handlers share.
#[derive(Clone)]
pub struct DashboardState {
    pub app: AppState,
    pub throttle: Arc<LoginThrottle>,
    /// Whether cookies get `Secure`: true when the dashboard is reached over TLS.
    pub secure_cookies: bool,
}

impl DashboardState {
    pub fn services(&self) -> &Services {
        &self.app.services
    }

    /// A `Set-Cookie` value for a dashboard cookie (`Max-Age=0` deletes it).
    pub fn cookie(&self, name: &str, value: &str, max_age: i64) -> HeaderValue {
        let secure = if self.secure_cookies { "; Secure" } else { "" };
        let value = format!(
            "{name}={value}; Path=/dashboard; HttpOnly; SameSite=Strict; Max-Age={}{secure}",
            max_age.max(0)
        );
        HeaderValue::from_str(&value).unwrap_or_else(|_| HeaderValue::from_static(""))
    }
}

/// The dashboard router, mounted at `/dashboard`. It does not pass through the API's key
/// authentication: the session cookie is its authentication.
pub fn router(app: AppState, secure_cookies: bool) -> Router {
    let state = DashboardState {
        app,
        throttle: Arc::new(LoginThrottle::default()),
        secure_cookies,
    };
    let routes = Router::new()
        .merge(session_routes())
        .merge(money_routes())
        .merge(billing_routes())
        .merge(integrations_routes())
        .fallback(|| async { DashError::NotFound })
        .method_not_allowed_fallback(|| async {
            layout::error_page(
                StatusCode::METHOD_NOT_ALLOWED,
                "Not allowed",
                "This page cannot be used that way.",
            )
        })
        .layer(axum::middleware::map_response(layout::security_headers))
        .layer(axum::middleware::from_fn(layout::with_viewer_zone))
        .with_state(state);
    Router::new().nest("/dashboard", routes)
}

/// The session's own pages: home, style, login and logout, mode, the account.
fn session_routes() -> Router<DashboardState> {
    Router::new()
        .route("/", get(home))
        .route("/static/style.css", get(layout::stylesheet))
        .route("/login", get(auth::login_page).post(auth::login))
        .route("/logout", post(auth::logout))
        .route("/mode", post(auth::switch_mode))
        .route("/account", get(auth::account_page))
        .route("/account/password", post(auth::change_password))
        .route("/account/profile", post(auth::update_profile))
        .route("/account/timezone", post(auth::set_timezone))
}

/// Where the money is: overview, payments and their actions, customers, balance, payouts, disputes.
fn money_routes() -> Router<DashboardState> {
    Router::new()
        .route("/overview", get(overview::overview))
        .route("/payments", get(payments::list_payments))
        .route("/payments.csv", get(payments::export_payments))
        .route("/payments/{id}", get(payment_page::retrieve_payment))
        .route("/balance", get(balance::balance_page))
        .route("/balance.csv", get(balance::export_balance))
        .route("/payouts", post(balance::create_payout))
        .route("/payout_destination", post(balance::set_payout_destination))
        .route("/payouts/{id}/cancel", post(balance::cancel_payout))
        .route("/disputes", get(disputes::list_disputes))
        .route("/disputes/{id}", get(disputes::retrieve_dispute))
        .route("/disputes/{id}/evidence", post(disputes::update_evidence))
        .route("/disputes/{id}/close", post(disputes::close_dispute))
        .route(
            "/payments/{id}/refund",
            post(payment_actions::refund_payment),
        )
        .route(
            "/payments/{id}/capture",
            post(payment_actions::capture_payment),
        )
        .route(
            "/payments/{id}/cancel",
            post(payment_actions::cancel_payment),
        )
        .route(
            "/customers",
            get(customers::list_customers).post(customers::create_customer),
        )
        .route(
            "/customers/{id}",
            get(customers::retrieve_customer).post(customers::update_customer),
        )
}

/// Billing: subscriptions, invoices, products and prices.
fn billing_routes() -> Router<DashboardState> {
    Router::new()
        .route("/subscriptions", get(billing::list_subscriptions))
        .route("/subscriptions/{id}", get(billing::retrieve_subscription))
        .route(
            "/subscriptions/{id}/cancel",
            post(billing::cancel_subscription),
        )
        .route("/invoices", get(billing::list_invoices))
        .route("/invoices/{id}", get(billing::retrieve_invoice))
        .route(
            "/products",
            get(products::list_products).post(products::create_product),
        )
        .route("/prices", post(products::create_price))
}

/// What connects an account to the outside: API keys, webhooks and their events, connectors.
fn integrations_routes() -> Router<DashboardState> {
    Router::new()
        .route("/checkout", get(checkout::checkout_page))
        .route("/checkout/settings", post(checkout::update_settings))
        .route("/keys", get(keys::list_keys).post(keys::create_key))
        .route("/keys/{id}/roll", post(keys::roll_key))
        .route("/keys/{id}/revoke", post(keys::revoke_key))
        .route(
            "/webhooks",
            get(webhooks::list_endpoints).post(webhooks::create_endpoint),
        )
        .route("/webhooks/{id}/enable", post(webhooks::enable_endpoint))
        .route("/webhooks/{id}/disable", post(webhooks::disable_endpoint))
        .route("/webhooks/{id}/delete", post(webhooks::delete_endpoint))
        .route("/webhooks/{id}/edit", post(webhooks::edit_endpoint))
        .route("/webhooks/{id}/roll", post(webhooks::roll_endpoint_secret))
        .route(
            "/connectors",
            get(connectors::list_connectors).post(connectors::create_connector),
        )
        .route(
            "/connectors/{id}/enable",
            post(connectors::enable_connector),
        )
        .route(
            "/connectors/{id}/disable",
            post(connectors::disable_connector),
        )
        .route(
            "/connectors/{id}/delete",
            post(connectors::delete_connector),
        )
        .route("/connectors/{id}/edit", post(connectors::edit_connector))
        .route("/events/{id}", get(events::retrieve_event))
        .route("/events/{id}/resend", post(events::resend_event))
}

async fn home(session: Result<Session, DashError>) -> Redirect {
    match session {
        Ok(_) => Redirect::to("/dashboard/overview"),
        Err(_) => Redirect::to("/dashboard/login"),
    }
}

/// Why a dashboard request ended without its page; each renders as HTML.
#[derive(Debug)]
pub enum DashError {
    /// No live session: back to the login page.
    LoginRequired,
    /// A POST without the right CSRF token (403).
    Csrf,
    /// The thing does not exist in this account and mode (404).
    NotFound,
    /// A malformed request that the page could not show inline (400).
    BadRequest(String),
    /// A use case failed: user mistakes show their message, failures of ours a 500 page.
    Core(CoreError),
}

impl From<CoreError> for DashError {
    fn from(e: CoreError) -> Self {
        match e {
            CoreError::NotFound { .. } => DashError::NotFound,
            e => DashError::Core(e),
        }
    }
}

impl IntoResponse for DashError {
    fn into_response(self) -> Response {
        match self {
            DashError::LoginRequired => Redirect::to("/dashboard/login").into_response(),
            DashError::Csrf => layout::error_page(
                StatusCode::FORBIDDEN,
                "Form expired",
                "This form did not come from your current dashboard session. Go back, reload \
                 the page and try again.",
            ),
            DashError::NotFound => layout::error_page(
                StatusCode::NOT_FOUND,
                "Not found",
                "There is nothing here in this account and mode.",
            ),
            DashError::BadRequest(message) => {
                layout::error_page(StatusCode::BAD_REQUEST, "Cannot do that", &message)
            }
            DashError::Core(e) if e.is_internal() => {
                tracing::error!(
                    error = %tender_core::error::error_chain(&e),
                    "dashboard request failed"
                );
                layout::error_page(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "Something went wrong",
                    &format!(
                        "The request could not be completed. Request id: {}",
                        current_request_id()
                    ),
                )
            }
            DashError::Core(e) => {
                layout::error_page(StatusCode::BAD_REQUEST, "Cannot do that", &e.to_string())
            }
        }
    }
}

/// Whether an error is the user's to fix (shown inline on the page) rather than ours.
pub fn user_message(e: &CoreError) -> Option<String> {
    (!e.is_internal()).then(|| e.to_string())
}

pub type PageResult = Result<Response, DashError>;

/// The value of cookie `name` in a request's `Cookie` headers.
pub fn cookie_value(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_string())
}

/// A logged-in account holder: the live session behind the request's cookie.
#[derive(Debug, Clone)]
pub struct Session {
    pub token: String,
    pub record: SessionRecord,
}

impl Session {
    /// The account and mode every read and write of this session is confined to.
    pub fn scope(&self) -> Scope {
        Scope {
            account: self.record.account.clone(),
            mode: self.record.mode,
        }
    }

    pub fn mode(&self) -> Mode {
        self.record.mode
    }

    /// The context the use cases take, as if a secret key of this account and mode asked.
    pub fn ctx(&self) -> RequestContext {
        RequestContext {
            principal: Principal {
                scope: self.scope(),
                key_kind: KeyKind::Secret,
            },
            request_id: current_request_id(),
            idempotency: None,
            client: None,
        }
    }
}

impl FromRequestParts<DashboardState> for Session {
    type Rejection = DashError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &DashboardState,
    ) -> Result<Self, DashError> {
        let token = cookie_value(&parts.headers, SESSION_COOKIE).ok_or(DashError::LoginRequired)?;
        match state.services().accounts().session(&token).await? {
            Some(record) => Ok(Session { token, record }),
            None => Err(DashError::LoginRequired),
        }
    }
}

/// The fields of a submitted form, in order (a name may repeat, as checkboxes do).
#[derive(Debug, Clone, Default)]
pub struct Fields(Vec<(String, String)>);

impl Fields {
    pub fn parse(body: &[u8]) -> Self {
        Fields(form_urlencoded::parse(body).into_owned().collect())
    }

    /// The first value of `name`, exactly as sent.
    pub fn raw(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The first value of `name`, trimmed; `None` when absent or blank.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.raw(name).map(str::trim).filter(|v| !v.is_empty())
    }

    /// Every non-blank value of `name`.
    pub fn all(&self, name: &str) -> Vec<String> {
        self.0
            .iter()
            .filter(|(k, v)| k == name && !v.trim().is_empty())
            .map(|(_, v)| v.trim().to_string())
            .collect()
    }
}

/// A POST from a logged-in session whose CSRF token matched: the session and the form fields.
pub struct Posted {
    pub session: Session,
    pub fields: Fields,
    /// The client's address, for throttling ([`auth::client_ip`]).
    pub client: Option<std::net::IpAddr>,
}

impl FromRequest<DashboardState> for Posted {
    type Rejection = DashError;

    async fn from_request(req: Request, state: &DashboardState) -> Result<Self, DashError> {
        let (mut parts, body) = req.into_parts();
        let session = Session::from_request_parts(&mut parts, state).await?;
        let client = auth::client_ip(&parts);
        let fields = read_form(body).await?;
        let sent = fields.raw("csrf_token").unwrap_or_default();
        if !secrets_equal(sent.as_bytes(), session.record.csrf_token.as_bytes()) {
            return Err(DashError::Csrf);
        }
        Ok(Posted {
            session,
            fields,
            client,
        })
    }
}

/// Reads a url-encoded form body (at most 64 KiB).
pub async fn read_form(body: axum::body::Body) -> Result<Fields, DashError> {
    let bytes: Bytes = axum::body::to_bytes(body, MAX_FORM).await.map_err(|e| {
        DashError::BadRequest(if crate::connection::is_body_timeout(&e) {
            "The form took too long to arrive.".into()
        } else {
            "The form is too large.".into()
        })
    })?;
    Ok(Fields::parse(&bytes))
}

/// A 303 to `path` (POST-redirect-GET).
pub fn see_other(path: &str) -> Response {
    Redirect::to(path).into_response()
}

/// What a form's action answers: on success a 303 to `done`; a refusal the user can fix, the
/// page again with the reason (400, rendered by `again`); anything else, an error page.
pub async fn answer_action<T, Fut>(
    result: Result<T, CoreError>,
    done: &str,
    again: impl FnOnce(layout::Notice) -> Fut,
) -> PageResult
where
    Fut: std::future::Future<Output = PageResult>,
{
    match result {
        Ok(_) => Ok(see_other(done)),
        Err(e @ CoreError::NotFound { .. }) => Err(e.into()),
        Err(e) => match user_message(&e) {
            Some(m) => again(layout::Notice::Error(m)).await,
            None => Err(e.into()),
        },
    }
}

/// A page of `collection` with `filters`, typed, whether more follow, and — when the store
/// refuses the list (an unknown cursor, a bad filter) — an empty page with the reason as the
/// notice, so the page still renders.
pub(super) async fn list_page<T: serde::de::DeserializeOwned>(
    state: &DashboardState,
    session: &Session,
    collection: Collection,
    params: &ListParams,
    filters: Vec<(Field, String)>,
) -> Result<(Vec<T>, bool, layout::Notice), DashError> {
    match state
        .services()
        .list_raw(&session.scope(), collection, params, filters)
        .await
    {
        Ok(p) => Ok((payments::parse_page(&p)?, p.has_more, layout::Notice::None)),
        Err(e) => match user_message(&e) {
            Some(m) => Ok((Vec::new(), false, layout::Notice::Error(m))),
            None => Err(e.into()),
        },
    }
}

/// A page body for when the session is fine but the item was not found.
pub fn empty_state(text: &str) -> maud::Markup {
    html! { p.empty { (text) } }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookie_value_finds_a_cookie_among_several() {
        let mut h = HeaderMap::new();
        h.insert(
            header::COOKIE,
            HeaderValue::from_static("a=1; tender_session=xyz; b=2"),
        );
        assert_eq!(cookie_value(&h, SESSION_COOKIE).as_deref(), Some("xyz"));
        assert_eq!(cookie_value(&h, "missing"), None);
    }

    #[test]
    fn fields_trim_and_repeat() {
        let f = Fields::parse(b"a=+x+&b=&c=1&c=2&c=");
        assert_eq!(f.get("a"), Some("x"));
        assert_eq!(f.get("b"), None);
        assert_eq!(f.raw("b"), Some(""));
        assert_eq!(f.all("c"), vec!["1", "2"]);
    }

    #[tokio::test]
    async fn an_internal_error_is_a_500_page_that_does_not_show_its_cause() {
        let cause = std::io::Error::other("secret detail of the failure");
        let e = CoreError::internal("seal a card", cause);
        assert_eq!(user_message(&e), None);
        let resp = DashError::Core(e).into_response();
        assert_eq!(resp.status(), StatusCode::INTERNAL_SERVER_ERROR);
        let body = axum::body::to_bytes(resp.into_body(), usize::MAX)
            .await
            .unwrap();
        let page = String::from_utf8_lossy(&body);
        assert!(page.contains("Something went wrong"), "{page}");
        assert!(!page.contains("secret detail"), "{page}");
        assert!(!page.contains("seal a card"), "{page}");
    }

    #[test]
    fn a_refusal_the_user_can_fix_is_shown_to_them() {
        let e = CoreError::invalid("amount", "parameter_invalid", "Amount too large.");
        assert_eq!(user_message(&e).as_deref(), Some("Amount too large."));
    }
}
