//! THE route table of the API: every method and path under `/v2`, its handler, and whether a
//! publishable key may call it. The router is built from it ([`super::router`]); the pipeline
//! asks it which requests a publishable key may make ([`publishable`]) and which ones the
//! router will answer 405 ([`refuses`], so that they stay out of idempotency); the request
//! decoder of the fuzz targets walks it; `tests/openapi.rs` holds `docs/openapi.json` to it
//! both ways. A new endpoint is one line here.
//!
//! `PATCH` is accepted wherever `POST` updates an object; `HEAD` wherever `GET` is.

use axum::http::Method;
use axum::routing::{on, MethodFilter, MethodRouter};

use super::{
    balance, billing, connectors, customers, disputes, events, payment_methods, payments, payouts,
    refunds, webhook_endpoints,
};
use crate::state::AppState;

/// One operation of the API.
pub struct Route {
    pub method: Method,
    /// The path template under `/v2`; `{id}` is the object's id.
    pub path: &'static str,
    /// A publishable key may call it (client-side card tokenisation only).
    pub publishable: bool,
    handler: fn() -> MethodRouter<AppState>,
}

impl Route {
    /// The axum method router of this operation alone.
    pub fn method_router(&self) -> MethodRouter<AppState> {
        (self.handler)()
    }
}

const fn secret(
    method: Method,
    path: &'static str,
    handler: fn() -> MethodRouter<AppState>,
) -> Route {
    Route {
        method,
        path,
        publishable: false,
        handler,
    }
}

const GET: Method = Method::GET;
const POST: Method = Method::POST;
const PATCH: Method = Method::PATCH;
const DELETE: Method = Method::DELETE;

fn get<H, T>(h: H) -> MethodRouter<AppState>
where
    H: axum::handler::Handler<T, AppState>,
    T: 'static,
{
    on(MethodFilter::GET, h)
}

fn post<H, T>(h: H) -> MethodRouter<AppState>
where
    H: axum::handler::Handler<T, AppState>,
    T: 'static,
{
    on(MethodFilter::POST, h)
}

fn patch<H, T>(h: H) -> MethodRouter<AppState>
where
    H: axum::handler::Handler<T, AppState>,
    T: 'static,
{
    on(MethodFilter::PATCH, h)
}

fn delete<H, T>(h: H) -> MethodRouter<AppState>
where
    H: axum::handler::Handler<T, AppState>,
    T: 'static,
{
    on(MethodFilter::DELETE, h)
}

/// Every operation of the API.
pub const ROUTES: &[Route] = &[
    secret(POST, "/payments", || post(payments::create_payment)),
    secret(GET, "/payments", || get(payments::list_payments)),
    secret(GET, "/payments/{id}", || get(payments::retrieve_payment)),
    secret(POST, "/payments/{id}", || post(payments::update_payment)),
    secret(PATCH, "/payments/{id}", || patch(payments::update_payment)),
    secret(POST, "/payments/{id}/capture", || {
        post(payments::capture_payment)
    }),
    secret(POST, "/payments/{id}/cancel", || {
        post(payments::cancel_payment)
    }),
    Route {
        method: POST,
        path: "/payment_methods",
        publishable: true,
        handler: || post(payment_methods::create_payment_method),
    },
    secret(GET, "/payment_methods", || {
        get(payment_methods::list_payment_methods)
    }),
    secret(GET, "/payment_methods/{id}", || {
        get(payment_methods::retrieve_payment_method)
    }),
    secret(POST, "/payment_methods/{id}/attach", || {
        post(payment_methods::attach_payment_method)
    }),
    secret(POST, "/payment_methods/{id}/detach", || {
        post(payment_methods::detach_payment_method)
    }),
    secret(POST, "/customers", || post(customers::create_customer)),
    secret(GET, "/customers", || get(customers::list_customers)),
    secret(GET, "/customers/{id}", || get(customers::retrieve_customer)),
    secret(POST, "/customers/{id}", || post(customers::update_customer)),
    secret(PATCH, "/customers/{id}", || {
        patch(customers::update_customer)
    }),
    secret(DELETE, "/customers/{id}", || {
        delete(customers::delete_customer)
    }),
    secret(POST, "/refunds", || post(refunds::create_refund)),
    secret(GET, "/refunds", || get(refunds::list_refunds)),
    secret(GET, "/refunds/{id}", || get(refunds::retrieve_refund)),
    secret(POST, "/refunds/{id}", || post(refunds::update_refund)),
    secret(PATCH, "/refunds/{id}", || patch(refunds::update_refund)),
    secret(GET, "/events", || get(events::list_events)),
    secret(GET, "/events/stream", || get(events::stream_events)),
    secret(GET, "/events/{id}", || get(events::retrieve_event)),
    secret(GET, "/events/{id}/deliveries", || {
        get(events::list_deliveries)
    }),
    secret(POST, "/events/{id}/resend", || post(events::resend_event)),
    secret(POST, "/webhook_endpoints", || {
        post(webhook_endpoints::create_endpoint)
    }),
    secret(GET, "/webhook_endpoints", || {
        get(webhook_endpoints::list_endpoints)
    }),
    secret(GET, "/webhook_endpoints/{id}", || {
        get(webhook_endpoints::retrieve_endpoint)
    }),
    secret(POST, "/webhook_endpoints/{id}", || {
        post(webhook_endpoints::update_endpoint)
    }),
    secret(PATCH, "/webhook_endpoints/{id}", || {
        patch(webhook_endpoints::update_endpoint)
    }),
    secret(DELETE, "/webhook_endpoints/{id}", || {
        delete(webhook_endpoints::delete_endpoint)
    }),
    secret(POST, "/webhook_endpoints/{id}/roll_secret", || {
        post(webhook_endpoints::roll_secret)
    }),
    secret(POST, "/connectors", || post(connectors::create_connector)),
    secret(GET, "/connectors", || get(connectors::list_connectors)),
    secret(GET, "/connectors/{id}", || {
        get(connectors::retrieve_connector)
    }),
    secret(POST, "/connectors/{id}", || {
        post(connectors::update_connector)
    }),
    secret(PATCH, "/connectors/{id}", || {
        patch(connectors::update_connector)
    }),
    secret(DELETE, "/connectors/{id}", || {
        delete(connectors::delete_connector)
    }),
    secret(GET, "/balance", || get(balance::retrieve_balance)),
    secret(GET, "/balance_transactions", || {
        get(balance::list_balance_transactions)
    }),
    secret(GET, "/balance_transactions/{id}", || {
        get(balance::retrieve_balance_transaction)
    }),
    secret(POST, "/payouts", || post(payouts::create_payout)),
    secret(GET, "/payouts", || get(payouts::list_payouts)),
    secret(GET, "/payouts/{id}", || get(payouts::retrieve_payout)),
    secret(POST, "/payouts/{id}/cancel", || {
        post(payouts::cancel_payout)
    }),
    secret(GET, "/disputes", || get(disputes::list_disputes)),
    secret(GET, "/disputes/{id}", || get(disputes::retrieve_dispute)),
    secret(POST, "/disputes/{id}", || post(disputes::update_dispute)),
    secret(POST, "/disputes/{id}/close", || {
        post(disputes::close_dispute)
    }),
    secret(POST, "/products", || post(billing::create_product)),
    secret(GET, "/products", || get(billing::list_products)),
    secret(GET, "/products/{id}", || get(billing::retrieve_product)),
    secret(POST, "/products/{id}", || post(billing::update_product)),
    secret(PATCH, "/products/{id}", || patch(billing::update_product)),
    secret(DELETE, "/products/{id}", || delete(billing::delete_product)),
    secret(POST, "/prices", || post(billing::create_price)),
    secret(GET, "/prices", || get(billing::list_prices)),
    secret(GET, "/prices/{id}", || get(billing::retrieve_price)),
    secret(POST, "/prices/{id}", || post(billing::update_price)),
    secret(PATCH, "/prices/{id}", || patch(billing::update_price)),
    secret(POST, "/subscriptions", || {
        post(billing::create_subscription)
    }),
    secret(GET, "/subscriptions", || get(billing::list_subscriptions)),
    secret(GET, "/subscriptions/{id}", || {
        get(billing::retrieve_subscription)
    }),
    secret(POST, "/subscriptions/{id}", || {
        post(billing::update_subscription)
    }),
    secret(PATCH, "/subscriptions/{id}", || {
        patch(billing::update_subscription)
    }),
    secret(DELETE, "/subscriptions/{id}", || {
        delete(billing::cancel_subscription)
    }),
    secret(GET, "/invoices", || get(billing::list_invoices)),
    secret(GET, "/invoices/{id}", || get(billing::retrieve_invoice)),
    secret(POST, "/invoices/{id}/pay", || post(billing::pay_invoice)),
    secret(POST, "/invoices/{id}/void", || post(billing::void_invoice)),
    secret(POST, "/test_helpers/test_clocks", || {
        post(billing::create_test_clock)
    }),
    secret(GET, "/test_helpers/test_clocks", || {
        get(billing::list_test_clocks)
    }),
    secret(GET, "/test_helpers/test_clocks/{id}", || {
        get(billing::retrieve_test_clock)
    }),
    secret(DELETE, "/test_helpers/test_clocks/{id}", || {
        delete(billing::delete_test_clock)
    }),
    secret(POST, "/test_helpers/test_clocks/{id}/advance", || {
        post(billing::advance_test_clock)
    }),
];

/// `path` without the `/v2` prefix the routes are nested under.
fn unprefixed(path: &str) -> &str {
    path.strip_prefix("/v2").unwrap_or(path)
}

/// The operation a request names (`method` upper case as on the wire, `path` as requested,
/// with or without `/v2`) and its `{id}` segment, as the router would pick it: a literal
/// segment wins over `{id}` (`/events/stream` is not an event id). `None`: no such operation.
pub fn resolve<'p>(method: &str, path: &'p str) -> Option<(&'static Route, Option<&'p str>)> {
    let segments: Vec<&str> = unprefixed(path).split('/').collect();
    let mut best: Option<(&'static Route, Option<&'p str>)> = None;
    for route in ROUTES.iter().filter(|r| r.method.as_str() == method) {
        let template: Vec<&str> = route.path.split('/').collect();
        if template.len() != segments.len() {
            continue;
        }
        let mut id = None;
        let matches = template.iter().zip(&segments).all(|(t, s)| match *t {
            "{id}" if !s.is_empty() => {
                id = Some(*s);
                true
            }
            t => t == *s,
        });
        // A literal match beats one through `{id}`.
        if matches && (best.is_none() || id.is_none()) {
            best = Some((route, id));
        }
    }
    best
}

/// Whether a publishable key may make this request (`path` as requested, ids filled in).
pub fn publishable(method: &Method, path: &str) -> bool {
    resolve(method.as_str(), path).is_some_and(|(route, _)| route.publishable)
}

/// Whether the router answers `method` on the matched route template `path` with 405: the path
/// is served, the method is not. (`HEAD` is served wherever `GET` is.)
pub fn refuses(method: &Method, path: &str) -> bool {
    let path = unprefixed(path);
    let method = if method == Method::HEAD {
        &Method::GET
    } else {
        method
    };
    let mut served = ROUTES.iter().filter(|r| r.path == path).peekable();
    served.peek().is_some() && !served.any(|r| r.method == method)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_operation_is_listed_twice() {
        let mut seen = std::collections::HashSet::new();
        for r in ROUTES {
            assert!(
                seen.insert((r.method.as_str(), r.path)),
                "{} {}",
                r.method,
                r.path
            );
        }
    }

    #[test]
    fn a_request_resolves_to_the_operation_the_router_would_pick() {
        let (r, id) = resolve("GET", "/v2/events/stream").unwrap();
        assert_eq!((r.path, id), ("/events/stream", None));
        let (r, id) = resolve("GET", "/v2/events/evt_1").unwrap();
        assert_eq!((r.path, id), ("/events/{id}", Some("evt_1")));
        let (r, id) = resolve("PATCH", "/payments/pay_1").unwrap();
        assert_eq!(
            (r.method.as_str(), r.path, id),
            ("PATCH", "/payments/{id}", Some("pay_1"))
        );
        assert!(resolve("PUT", "/v2/payments/pay_1").is_none());
        assert!(resolve("GET", "/v2/payments/").is_none());
        assert!(resolve("GET", "/v2/payments/pay_1/extra").is_none());
        for route in ROUTES {
            let path = format!("/v2{}", route.path.replace("{id}", "x_1"));
            let (found, _) = resolve(route.method.as_str(), &path).unwrap();
            assert_eq!((&found.method, found.path), (&route.method, route.path));
        }
    }

    #[test]
    fn only_tokenisation_is_open_to_publishable_keys() {
        assert!(publishable(&Method::POST, "/v2/payment_methods"));
        assert!(!publishable(&Method::GET, "/v2/payment_methods"));
        assert!(!publishable(&Method::POST, "/v2/payments"));
        assert_eq!(ROUTES.iter().filter(|r| r.publishable).count(), 1);
    }

    #[test]
    fn a_served_path_refuses_other_methods_and_an_unknown_path_refuses_nothing() {
        assert!(refuses(&Method::DELETE, "/v2/payments/{id}"));
        assert!(refuses(&Method::PUT, "/v2/customers"));
        assert!(!refuses(&Method::PATCH, "/v2/payments/{id}"));
        assert!(!refuses(&Method::HEAD, "/v2/events"));
        assert!(!refuses(&Method::DELETE, "/v2/nothing"));
    }
}
