//! THE route table of the API: every method and path under `/v2`, its parser, its handler,
//! and whether a publishable key may call it. The router is built from it ([`super::router`]);
//! the pipeline asks it which requests a publishable key may make ([`publishable`]) and which
//! ones the router will answer 405 ([`refuses`], so that they stay out of idempotency); the
//! fuzz targets decode requests with its parsers ([`decode`]); `tests/openapi.rs` holds
//! `docs/openapi.json` to it both ways. A new endpoint is one line here: `op!(METHOD "path",
//! parser => handler)`, where the parser turns the request's [`Input`] into the handler's
//! typed command (see [`super::operation`]).
//!
//! `PATCH` is accepted wherever `POST` updates an object; `HEAD` wherever `GET` is.

use axum::http::Method;
use axum::routing::{get, MethodFilter, MethodRouter};
use serde_json::Value;
use tender_core::error::CoreError;
use tender_core::ids::{kind, Id, Kind};

use super::operation::{custom, endpoint, list, retrieve, Decoded, Input, Op};
use super::params;
use super::pipeline::parse_json_body;
use super::{
    balance, billing, checkout, connectors, customers, disputes, events, payment_links,
    payment_methods, payments, payouts, refunds, setup_intents, webhook_endpoints,
};
use crate::state::AppState;

/// One operation of the API.
pub struct Route {
    pub method: Method,
    /// The path template under `/v2`; `{id}` is the object's id.
    pub path: &'static str,
    /// A publishable key may call it (client-side card tokenisation only).
    pub publishable: bool,
    op: fn() -> Op,
}

impl Route {
    /// The axum method router of this operation alone.
    pub fn method_router(&self) -> MethodRouter<AppState> {
        (self.op)().router
    }
}

/// A row: `METHOD "path", parser => handler` (see [`super::operation`]).
macro_rules! op {
    ($method:ident $path:literal, $parse:expr => $run:expr) => {
        op!(@ false, $method $path, $parse => $run)
    };
    (publishable $method:ident $path:literal, $parse:expr => $run:expr) => {
        op!(@ true, $method $path, $parse => $run)
    };
    (@ $publishable:literal, $method:ident $path:literal, $parse:expr => $run:expr) => {
        Route {
            method: Method::$method,
            path: $path,
            publishable: $publishable,
            op: || endpoint(MethodFilter::$method, $parse, $run),
        }
    };
}

/// The `{id}` alone.
fn by_id<K: Kind>(i: Input) -> Result<Id<K>, CoreError> {
    i.id()
}

/// The `{id}`, with a body that must be empty (a delete, a cancel).
fn by_id_alone<K: Kind>(i: Input) -> Result<Id<K>, CoreError> {
    let id = i.id()?;
    i.no_body()?;
    Ok(id)
}

/// Every operation of the API.
pub const ROUTES: &[Route] = &[
    op!(POST "/payments", |i| payments::parse_create(i.body) => payments::create_payment),
    op!(GET "/payments", |i| i.list(payments::parse_list) => list::<kind::Payment>),
    op!(GET "/payments/{id}", by_id => retrieve::<kind::Payment>),
    op!(POST "/payments/{id}", |i| Ok((i.id()?, payments::parse_update(i.body)?)) => payments::update_payment),
    op!(PATCH "/payments/{id}", |i| Ok((i.id()?, payments::parse_update(i.body)?)) => payments::update_payment),
    op!(POST "/payments/{id}/capture", |i| Ok((i.id()?, payments::parse_capture(i.body)?)) => payments::capture_payment),
    op!(POST "/payments/{id}/cancel", |i| Ok((i.id()?, payments::parse_cancel(i.body)?)) => payments::cancel_payment),
    op!(publishable POST "/payment_methods", |i| payment_methods::parse_create(i.body) => payment_methods::create_payment_method),
    op!(GET "/payment_methods", |i| i.list(payment_methods::parse_list) => list::<kind::PaymentMethod>),
    op!(GET "/payment_methods/{id}", by_id => retrieve::<kind::PaymentMethod>),
    op!(POST "/payment_methods/{id}/attach", |i| Ok((i.id()?, payment_methods::parse_attach(i.body)?)) => payment_methods::attach_payment_method),
    op!(POST "/payment_methods/{id}/detach", by_id_alone => payment_methods::detach_payment_method),
    op!(POST "/setup_intents", |i| setup_intents::parse_create(i.body) => setup_intents::create_setup_intent),
    op!(GET "/setup_intents", |i| i.list(setup_intents::parse_list) => list::<kind::SetupIntent>),
    op!(GET "/setup_intents/{id}", by_id => retrieve::<kind::SetupIntent>),
    op!(POST "/setup_intents/{id}/confirm", |i| Ok((i.id()?, setup_intents::parse_confirm(i.body)?)) => setup_intents::confirm_setup_intent),
    op!(POST "/setup_intents/{id}/cancel", |i| Ok((i.id()?, setup_intents::parse_cancel(i.body)?)) => setup_intents::cancel_setup_intent),
    op!(POST "/customers", |i| customers::parse_create(i.body) => customers::create_customer),
    op!(GET "/customers", |i| i.list(customers::parse_list) => list::<kind::Customer>),
    op!(GET "/customers/{id}", by_id => retrieve::<kind::Customer>),
    op!(POST "/customers/{id}", |i| Ok((i.id()?, customers::parse_fields(i.body)?)) => customers::update_customer),
    op!(PATCH "/customers/{id}", |i| Ok((i.id()?, customers::parse_fields(i.body)?)) => customers::update_customer),
    op!(DELETE "/customers/{id}", by_id_alone => customers::delete_customer),
    op!(POST "/refunds", |i| refunds::parse_create(i.body) => refunds::create_refund),
    op!(GET "/refunds", |i| i.list(refunds::parse_list) => list::<kind::Refund>),
    op!(GET "/refunds/{id}", by_id => retrieve::<kind::Refund>),
    op!(POST "/refunds/{id}", |i| Ok((i.id()?, refunds::parse_update(i.body)?)) => refunds::update_refund),
    op!(PATCH "/refunds/{id}", |i| Ok((i.id()?, refunds::parse_update(i.body)?)) => refunds::update_refund),
    op!(GET "/events", |i| i.list(events::parse_list) => list::<kind::Event>),
    Route {
        method: Method::GET,
        path: "/events/stream",
        publishable: false,
        op: || {
            custom(get(events::stream_events), |i| {
                events::parse_stream(i.query())
            })
        },
    },
    op!(GET "/events/{id}", by_id => retrieve::<kind::Event>),
    op!(GET "/events/{id}/deliveries", events::parse_deliveries => events::list_deliveries),
    op!(POST "/events/{id}/resend", |i| Ok((i.id()?, events::parse_resend(i.body)?)) => events::resend_event),
    op!(POST "/webhook_endpoints", |i| webhook_endpoints::parse_fields(i.body, false) => webhook_endpoints::create_endpoint),
    op!(GET "/webhook_endpoints", |i| i.list(params::page_only) => list::<kind::WebhookEndpoint>),
    op!(GET "/webhook_endpoints/{id}", by_id => retrieve::<kind::WebhookEndpoint>),
    op!(POST "/webhook_endpoints/{id}", |i| Ok((i.id()?, webhook_endpoints::parse_fields(i.body, true)?)) => webhook_endpoints::update_endpoint),
    op!(PATCH "/webhook_endpoints/{id}", |i| Ok((i.id()?, webhook_endpoints::parse_fields(i.body, true)?)) => webhook_endpoints::update_endpoint),
    op!(DELETE "/webhook_endpoints/{id}", by_id_alone => webhook_endpoints::delete_endpoint),
    op!(POST "/webhook_endpoints/{id}/roll_secret", |i| Ok((i.id()?, webhook_endpoints::parse_roll_secret(i.body)?)) => webhook_endpoints::roll_secret),
    op!(POST "/connectors", |i| connectors::parse_fields(i.body, false) => connectors::create_connector),
    op!(GET "/connectors", |i| i.list(params::page_only) => list::<kind::Connector>),
    op!(GET "/connectors/{id}", by_id => retrieve::<kind::Connector>),
    op!(POST "/connectors/{id}", |i| Ok((i.id()?, connectors::parse_fields(i.body, true)?)) => connectors::update_connector),
    op!(PATCH "/connectors/{id}", |i| Ok((i.id()?, connectors::parse_fields(i.body, true)?)) => connectors::update_connector),
    op!(DELETE "/connectors/{id}", by_id_alone => connectors::delete_connector),
    op!(GET "/balance", |i| balance::parse_retrieve(i.query()) => balance::retrieve_balance),
    op!(GET "/balance_transactions", |i| i.list(balance::parse_list) => balance::list_balance_transactions),
    op!(GET "/balance_transactions/{id}", by_id => retrieve::<kind::BalanceTransaction>),
    op!(POST "/payouts", |i| payouts::parse_create(i.body) => payouts::create_payout),
    op!(GET "/payouts", |i| i.list(payouts::parse_list) => list::<kind::Payout>),
    op!(GET "/payouts/{id}", by_id => retrieve::<kind::Payout>),
    op!(POST "/payouts/{id}/cancel", by_id_alone => payouts::cancel_payout),
    op!(GET "/disputes", |i| i.list(disputes::parse_list) => list::<kind::Dispute>),
    op!(GET "/disputes/{id}", by_id => retrieve::<kind::Dispute>),
    op!(POST "/disputes/{id}", |i| Ok((i.id()?, disputes::parse_update(i.body)?)) => disputes::update_dispute),
    op!(POST "/disputes/{id}/close", by_id_alone => disputes::close_dispute),
    op!(POST "/products", |i| billing::parse_create_product(i.body) => billing::create_product),
    op!(GET "/products", |i| i.list(billing::parse_list_products) => list::<kind::Product>),
    op!(GET "/products/{id}", by_id => retrieve::<kind::Product>),
    op!(POST "/products/{id}", |i| Ok((i.id()?, billing::parse_update_product(i.body)?)) => billing::update_product),
    op!(PATCH "/products/{id}", |i| Ok((i.id()?, billing::parse_update_product(i.body)?)) => billing::update_product),
    op!(DELETE "/products/{id}", by_id_alone => billing::delete_product),
    op!(POST "/prices", |i| billing::parse_create_price(i.body) => billing::create_price),
    op!(GET "/prices", |i| i.list(billing::parse_list_prices) => list::<kind::Price>),
    op!(GET "/prices/{id}", by_id => retrieve::<kind::Price>),
    op!(POST "/prices/{id}", |i| Ok((i.id()?, billing::parse_update_price(i.body)?)) => billing::update_price),
    op!(PATCH "/prices/{id}", |i| Ok((i.id()?, billing::parse_update_price(i.body)?)) => billing::update_price),
    op!(POST "/subscriptions", |i| billing::parse_create_subscription(i.body) => billing::create_subscription),
    op!(GET "/subscriptions", |i| i.list(billing::parse_list_subscriptions) => list::<kind::Subscription>),
    op!(GET "/subscriptions/{id}", by_id => retrieve::<kind::Subscription>),
    op!(POST "/subscriptions/{id}", |i| Ok((i.id()?, billing::parse_update_subscription(i.body)?)) => billing::update_subscription),
    op!(PATCH "/subscriptions/{id}", |i| Ok((i.id()?, billing::parse_update_subscription(i.body)?)) => billing::update_subscription),
    op!(DELETE "/subscriptions/{id}", by_id_alone => billing::cancel_subscription),
    op!(POST "/subscriptions/{id}/resume", by_id_alone => billing::resume_subscription),
    op!(GET "/invoices", |i| i.list(billing::parse_list_invoices) => list::<kind::Invoice>),
    op!(GET "/invoices/{id}", by_id => retrieve::<kind::Invoice>),
    op!(POST "/invoices/{id}/pay", |i| Ok((i.id()?, billing::parse_pay_invoice(i.body)?)) => billing::pay_invoice),
    op!(POST "/invoices/{id}/void", by_id_alone => billing::void_invoice),
    op!(POST "/test_helpers/test_clocks", |i| billing::parse_create_clock(i.body) => billing::create_test_clock),
    op!(GET "/test_helpers/test_clocks", |i| i.list(params::page_only) => list::<kind::TestClock>),
    op!(GET "/test_helpers/test_clocks/{id}", by_id => retrieve::<kind::TestClock>),
    op!(DELETE "/test_helpers/test_clocks/{id}", by_id_alone => billing::delete_test_clock),
    op!(POST "/checkout_sessions", |i| checkout::parse_create(i.body) => checkout::create_checkout_session),
    op!(GET "/checkout_sessions", |i| i.list(checkout::parse_list) => list::<kind::CheckoutSession>),
    op!(GET "/checkout_sessions/{id}", by_id => checkout::retrieve_checkout_session),
    op!(GET "/checkout_sessions/{id}/line_items", by_id => checkout::list_line_items),
    op!(POST "/checkout_sessions/{id}/expire", by_id_alone => checkout::expire_checkout_session),
    op!(POST "/payment_links", |i| payment_links::parse_create(i.body) => payment_links::create_payment_link),
    op!(GET "/payment_links", |i| i.list(payment_links::parse_list) => list::<kind::PaymentLink>),
    op!(GET "/payment_links/{id}", by_id => retrieve::<kind::PaymentLink>),
    op!(POST "/payment_links/{id}", |i| Ok((i.id()?, payment_links::parse_update(i.body)?)) => payment_links::update_payment_link),
    op!(PATCH "/payment_links/{id}", |i| Ok((i.id()?, payment_links::parse_update(i.body)?)) => payment_links::update_payment_link),
    op!(GET "/payment_links/{id}/line_items", by_id => payment_links::list_line_items),
    op!(POST "/test_helpers/test_clocks/{id}/advance", |i| Ok((i.id()?, billing::parse_advance_clock(i.body)?)) => billing::advance_test_clock),
];

/// Decodes one request as the router, the pipeline and the handler would, without a server or
/// a store: `(method, path, query, body bytes)` → the command the operation's handler would
/// get, or the 4xx it would answer first. `method` is upper case as on the wire; `path` may
/// carry the `/v2` prefix. An unknown route is `NotFound { kind: "route" }`. The fuzz targets
/// (`fuzz/fuzz_targets/request_decode.rs`) call it.
///
/// What it leaves out: authentication, the rate limit, the 64 KiB and `Content-Type` rules and
/// idempotency (the pipeline's), and everything a service checks against stored state.
pub fn decode(
    method: &str,
    path: &str,
    query: Option<&str>,
    body: &[u8],
) -> Result<Decoded, CoreError> {
    let no_route = || CoreError::NotFound {
        kind: "route",
        id: path.to_string(),
    };
    // The pipeline reads a body for these methods only; an empty one is `{}`.
    let body = if matches!(method, "POST" | "PATCH" | "DELETE" | "PUT") && !body.is_empty() {
        parse_json_body(body)?
    } else {
        Value::Object(Default::default())
    };
    let (route, id) = resolve(method, path).ok_or_else(no_route)?;
    let input = Input {
        path: format!("/v2{}", unprefixed(path)),
        id: id.unwrap_or_default().to_string(),
        query: query.map(str::to_string),
        body,
    };
    ((route.op)().decode)(input)
}

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
        // A literal match beats one through `{id}`.
        match super::operation::match_template(route.path, &segments) {
            Some(id) if best.is_none() || id.is_none() => best = Some((route, id)),
            _ => {}
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
    use serde_json::json;
    use tender_core::ids::IdKind;
    use tender_core::payments::create::{CreatePayment, PaymentMethodInput};

    fn sample_id(template: &str) -> String {
        let kind = match template.split('/').nth(1).unwrap() {
            "payments" => IdKind::Payment,
            "payment_methods" => IdKind::PaymentMethod,
            "customers" => IdKind::Customer,
            "refunds" => IdKind::Refund,
            "events" => IdKind::Event,
            "connectors" => IdKind::Connector,
            "balance_transactions" => IdKind::BalanceTransaction,
            "payouts" => IdKind::Payout,
            "disputes" => IdKind::Dispute,
            "products" => IdKind::Product,
            "prices" => IdKind::Price,
            "subscriptions" => IdKind::Subscription,
            "invoices" => IdKind::Invoice,
            "setup_intents" => IdKind::SetupIntent,
            "checkout_sessions" => IdKind::CheckoutSession,
            "payment_links" => IdKind::PaymentLink,
            "test_helpers" => IdKind::TestClock,
            _ => IdKind::WebhookEndpoint,
        };
        template.replace("{id}", &tender_core::ids::generate(kind))
    }

    #[test]
    fn every_route_decodes_or_names_a_parameter() {
        for route in ROUTES {
            let (m, template) = (route.method.as_str(), route.path);
            let path = sample_id(template);
            match decode(m, &path, None, b"") {
                Ok(_) => {}
                Err(CoreError::InvalidParam { param: Some(_), .. }) => {}
                Err(other) => panic!("{m} {template}: {other:?}"),
            }
        }
    }

    #[test]
    fn decoding_follows_the_handlers() {
        let body = br#"{"amount": 1000, "currency": "USD", "payment_method": {"type": "card",
            "card": {"number": "4242424242424242", "exp_month": 12, "exp_year": 2034, "cvc": "123"}}}"#;
        let cmd = decode("POST", "/v2/payments", None, body).unwrap();
        let cmd = cmd.downcast::<CreatePayment>().unwrap();
        assert_eq!(cmd.amount.get(), 1000);
        let err = decode("POST", "/v2/payments", None, br#"{"status": "succeeded"}"#)
            .err()
            .unwrap();
        assert!(matches!(
            err,
            CoreError::InvalidParam {
                code: "parameter_unknown",
                ..
            }
        ));
        let err = decode("GET", "/v2/payments/pay_nope", None, b"")
            .err()
            .unwrap();
        assert!(matches!(
            err,
            CoreError::NotFound {
                kind: "payment",
                ..
            }
        ));
        let err = decode("POST", "/v2/customers", None, b"{\xff}")
            .err()
            .unwrap();
        assert!(matches!(
            err,
            CoreError::InvalidParam {
                code: "invalid_json",
                ..
            }
        ));
        let err = decode("GET", "/v2/refunds", Some("limit=100000"), b"")
            .err()
            .unwrap();
        assert!(matches!(err, CoreError::InvalidParam { .. }));
        let err = decode("PUT", "/v2/refunds", None, b"").err().unwrap();
        assert!(matches!(err, CoreError::NotFound { kind: "route", .. }));
    }

    /// Ids in a body are checked for their kind where they are read, and carried typed: what
    /// could name nothing (another kind's id, a malformed one) is the same 400 a missing one
    /// gets from the service, before any lookup.
    #[test]
    fn ids_in_a_body_are_typed_where_they_are_read() {
        let create = |customer: &str, pm: &str| {
            let body = json!({"amount": 500, "currency": "usd", "customer": customer,
                "payment_method": pm});
            decode("POST", "/v2/payments", None, body.to_string().as_bytes())
        };
        let (cus, pm) = (
            tender_core::ids::generate(IdKind::Customer),
            tender_core::ids::generate(IdKind::PaymentMethod),
        );
        let c = create(&cus, &pm)
            .unwrap()
            .downcast::<CreatePayment>()
            .unwrap();
        assert_eq!(c.customer.as_ref().unwrap(), &cus);
        assert!(matches!(c.payment_method, PaymentMethodInput::Saved(ref id) if *id == pm));
        let missing = |r: Result<Decoded, CoreError>, name: &str, id: &str| match r.err().unwrap() {
            CoreError::InvalidParam {
                param: Some(param),
                code: "resource_missing",
                message,
            } => {
                assert_eq!(param, name);
                assert_eq!(message, format!("No such {name}: '{id}'"));
            }
            other => panic!("{other:?}"),
        };
        let payment = tender_core::ids::generate(IdKind::Payment);
        missing(create(&payment, &pm), "customer", &payment);
        missing(create("cus_1'--", &pm), "customer", "cus_1'--");
        missing(create(&cus, &cus), "payment_method", &cus);
        let attach = json!({"customer": "cus_short"}).to_string();
        let path = format!("/v2/payment_methods/{pm}/attach");
        missing(
            decode("POST", &path, None, attach.as_bytes()),
            "customer",
            "cus_short",
        );
        let update = json!({"customer": pm}).to_string();
        let path = format!("/v2/payments/{payment}");
        missing(
            decode("POST", &path, None, update.as_bytes()),
            "customer",
            &pm,
        );
    }

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
