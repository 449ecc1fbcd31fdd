//! THE route table of `/v1`: every operation of Stripe's API that Tender serves, its
//! parameters, its parser, its handler and the shape of its answer. The `/v1` router is built
//! from it ([`super::router`]); the gate asks it who may call what ([`resolve`]) and how to
//! show the answer; `docs/stripe-compatibility.md` is generated from it (`tender
//! stripe-compatibility`, checked by a test), so the list of what is supported cannot drift.
//!
//! A row: `op!(METHOD "path" [PARAMS] -> answer, parser => handler)`. The parser reads Stripe's
//! parameters ([`crate::http::params::Params`] in form mode) into the same command `/v2`
//! builds; the handler is usually `/v2`'s own, whose answer the gate shows in Stripe's shape
//! (`tender_core::stripe`). Anything not in this table is Stripe's 404 `Unrecognized request
//! URL`; a parameter not in a row's list is 400 `parameter_unknown` naming it.

use axum::http::Method;
use axum::routing::{MethodFilter, MethodRouter};
use tender_core::stripe::Shape;

use super::billing::{id_alone, parsers as bp, with, with_id};
use super::{
    balance, billing, charges, checkout, customers, payment_intents, payment_links,
    payment_methods, refunds, setup_intents, webhooks,
};
use crate::http::operation::{endpoint, match_template, Decoded, Input, Op};
use crate::http::operation::{list, retrieve};
use crate::state::AppState;
use tender_core::error::CoreError;
use tender_core::ids::kind;

/// What an operation answers with: one object, or a list of them, in `Shape`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    One(Shape),
    List(Shape),
    /// Events, which their handler shows itself (under the Stripe name asked for); `true`: a
    /// list of them.
    Events(bool),
}

impl Answer {
    /// The shape the gate shows the answer in; `None`: the handler answers in Stripe's shape.
    pub fn shape(self) -> Option<Shape> {
        match self {
            Answer::One(s) | Answer::List(s) => Some(s),
            Answer::Events(_) => None,
        }
    }

    pub fn is_list(self) -> bool {
        matches!(self, Answer::List(_) | Answer::Events(true))
    }
}

/// Who may call an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caller {
    /// A secret key only.
    Secret,
    /// A publishable key too (a browser tokenising a card).
    Publishable,
    /// A publishable key too, with the object's `client_secret` (a browser confirming or
    /// reading the PaymentIntent it was given); the gate checks it and takes it out.
    ClientSecret,
}

/// One operation of `/v1`.
pub struct StripeRoute {
    pub method: Method,
    /// The path template under `/v1`; `{id}` is the object's id.
    pub path: &'static str,
    /// The parameters it takes (besides `expand`), as Stripe names them.
    pub params: &'static [&'static str],
    pub answer: Answer,
    pub caller: Caller,
    op: fn() -> Op,
}

impl StripeRoute {
    pub fn method_router(&self) -> MethodRouter<AppState> {
        (self.op)().router
    }
}

macro_rules! op {
    ($method:ident $path:literal [$params:expr] -> $answer:expr, $parse:expr => $run:expr) => {
        op!(@ Caller::Secret, $method $path [$params] -> $answer, $parse => $run)
    };
    (publishable $method:ident $path:literal [$params:expr] -> $answer:expr, $parse:expr => $run:expr) => {
        op!(@ Caller::Publishable, $method $path [$params] -> $answer, $parse => $run)
    };
    (client_secret $method:ident $path:literal [$params:expr] -> $answer:expr, $parse:expr => $run:expr) => {
        op!(@ Caller::ClientSecret, $method $path [$params] -> $answer, $parse => $run)
    };
    (@ $caller:expr, $method:ident $path:literal [$params:expr] -> $answer:expr, $parse:expr => $run:expr) => {
        StripeRoute {
            method: Method::$method,
            path: $path,
            params: $params,
            answer: $answer,
            caller: $caller,
            op: || endpoint(MethodFilter::$method, $parse, $run),
        }
    };
}

use Answer::{List, One};
use Shape::*;

use super::billing::NONE;

/// Every operation of `/v1`.
pub const ROUTES: &[StripeRoute] = &[
    op!(POST "/payment_intents" [payment_intents::CREATE] -> One(PaymentIntent), payment_intents::parse_create => payment_intents::create),
    op!(GET "/payment_intents" [payment_intents::LIST] -> List(PaymentIntent), payment_intents::parse_list => crate::http::operation::list::<tender_core::ids::kind::Payment>),
    op!(client_secret GET "/payment_intents/{id}" [NONE] -> One(PaymentIntent), payment_intents::parse_id => crate::http::operation::retrieve),
    op!(POST "/payment_intents/{id}" [payment_intents::UPDATE] -> One(PaymentIntent), payment_intents::parse_update => crate::http::payments::update_payment),
    op!(client_secret POST "/payment_intents/{id}/confirm" [payment_intents::CONFIRM] -> One(PaymentIntent), payment_intents::parse_confirm => payment_intents::confirm),
    op!(POST "/payment_intents/{id}/capture" [payment_intents::CAPTURE] -> One(PaymentIntent), payment_intents::parse_capture => crate::http::payments::capture_payment),
    op!(POST "/payment_intents/{id}/cancel" [payment_intents::CANCEL] -> One(PaymentIntent), payment_intents::parse_cancel => crate::http::payments::cancel_payment),
    op!(GET "/charges" [charges::LIST] -> List(Charge), charges::parse_list => charges::list),
    op!(GET "/charges/{id}" [NONE] -> One(Charge), payment_intents::parse_id => crate::http::operation::retrieve),
    op!(POST "/customers" [customers::CREATE] -> One(Customer), customers::parse_create => crate::http::customers::create_customer),
    op!(GET "/customers" [customers::LIST] -> List(Customer), customers::parse_list => crate::http::operation::list::<tender_core::ids::kind::Customer>),
    op!(GET "/customers/{id}" [NONE] -> One(Customer), customers::parse_id => crate::http::operation::retrieve),
    op!(POST "/customers/{id}" [customers::UPDATE] -> One(Customer), customers::parse_update => crate::http::customers::update_customer),
    op!(DELETE "/customers/{id}" [NONE] -> One(Customer), customers::parse_id => crate::http::customers::delete_customer),
    op!(GET "/customers/{id}/payment_methods" [payment_methods::LIST_OF_CUSTOMER] -> List(PaymentMethod), payment_methods::parse_list_of_customer => crate::http::operation::list::<tender_core::ids::kind::PaymentMethod>),
    op!(publishable POST "/payment_methods" [payment_methods::CREATE] -> One(PaymentMethod), payment_methods::parse_create => payment_methods::create),
    op!(GET "/payment_methods" [payment_methods::LIST] -> List(PaymentMethod), payment_methods::parse_list => crate::http::operation::list::<tender_core::ids::kind::PaymentMethod>),
    op!(GET "/payment_methods/{id}" [NONE] -> One(PaymentMethod), payment_methods::parse_id => crate::http::operation::retrieve),
    op!(POST "/payment_methods/{id}/attach" [payment_methods::ATTACH] -> One(PaymentMethod), payment_methods::parse_attach => payment_methods::attach),
    op!(POST "/payment_methods/{id}/detach" [NONE] -> One(PaymentMethod), payment_methods::parse_detach => crate::http::payment_methods::detach_payment_method),
    op!(POST "/setup_intents" [setup_intents::CREATE] -> One(SetupIntent), setup_intents::parse_create => setup_intents::create),
    op!(GET "/setup_intents" [setup_intents::LIST] -> List(SetupIntent), setup_intents::parse_list => list::<kind::SetupIntent>),
    op!(client_secret GET "/setup_intents/{id}" [NONE] -> One(SetupIntent), setup_intents::parse_id => retrieve::<kind::SetupIntent>),
    op!(client_secret POST "/setup_intents/{id}/confirm" [setup_intents::CONFIRM] -> One(SetupIntent), setup_intents::parse_confirm => setup_intents::confirm),
    op!(POST "/setup_intents/{id}/cancel" [setup_intents::CANCEL] -> One(SetupIntent), setup_intents::parse_cancel => crate::http::setup_intents::cancel_setup_intent),
    op!(POST "/checkout/sessions" [checkout::CREATE] -> One(CheckoutSession), checkout::parse_create => crate::http::checkout::create_checkout_session),
    op!(GET "/checkout/sessions" [checkout::LIST] -> List(CheckoutSession), checkout::parse_list => list::<kind::CheckoutSession>),
    op!(GET "/checkout/sessions/{id}" [NONE] -> One(CheckoutSession), checkout::parse_id => crate::http::checkout::retrieve_checkout_session),
    op!(GET "/checkout/sessions/{id}/line_items" [checkout::LINE_ITEMS] -> List(LineItem), checkout::parse_line_items => crate::http::checkout::list_line_items),
    op!(POST "/checkout/sessions/{id}/expire" [NONE] -> One(CheckoutSession), checkout::parse_id => crate::http::checkout::expire_checkout_session),
    op!(POST "/payment_links" [payment_links::CREATE] -> One(PaymentLink), payment_links::parse_create => crate::http::payment_links::create_payment_link),
    op!(GET "/payment_links" [payment_links::LIST] -> List(PaymentLink), payment_links::parse_list => list::<kind::PaymentLink>),
    op!(GET "/payment_links/{id}" [NONE] -> One(PaymentLink), payment_links::parse_id => retrieve::<kind::PaymentLink>),
    op!(POST "/payment_links/{id}" [payment_links::UPDATE] -> One(PaymentLink), payment_links::parse_update => crate::http::payment_links::update_payment_link),
    op!(GET "/payment_links/{id}/line_items" [checkout::LINE_ITEMS] -> List(LineItem), payment_links::parse_line_items => crate::http::payment_links::list_line_items),
    op!(POST "/refunds" [refunds::CREATE] -> One(Refund), refunds::parse_create => crate::http::refunds::create_refund),
    op!(GET "/refunds" [refunds::LIST] -> List(Refund), refunds::parse_list => crate::http::operation::list::<tender_core::ids::kind::Refund>),
    op!(GET "/refunds/{id}" [NONE] -> One(Refund), refunds::parse_id => crate::http::operation::retrieve),
    op!(POST "/refunds/{id}" [refunds::UPDATE] -> One(Refund), refunds::parse_update => crate::http::refunds::update_refund),
    op!(POST "/products" [bp::PRODUCT_FIELDS] -> One(Product), |i| with(i, bp::PRODUCT_FIELDS, bp::create_product) => crate::http::billing::create_product),
    op!(GET "/products" [billing::LIST_PRODUCTS] -> List(Product), billing::parse_list_products => list::<kind::Product>),
    op!(GET "/products/{id}" [NONE] -> One(Product), id_alone => retrieve::<kind::Product>),
    op!(POST "/products/{id}" [bp::PRODUCT_UPDATE_FIELDS] -> One(Product), |i| with_id(i, bp::PRODUCT_UPDATE_FIELDS, bp::update_product) => crate::http::billing::update_product),
    op!(DELETE "/products/{id}" [NONE] -> One(Product), id_alone => crate::http::billing::delete_product),
    op!(POST "/prices" [billing::CREATE_PRICE] -> One(Price), billing::parse_create_price => billing::create_price),
    op!(GET "/prices" [billing::LIST_PRICES] -> List(Price), billing::parse_list_prices => billing::list_prices),
    op!(GET "/prices/{id}" [NONE] -> One(Price), id_alone => retrieve::<kind::Price>),
    op!(POST "/prices/{id}" [bp::PRICE_UPDATE_FIELDS] -> One(Price), |i| with_id(i, bp::PRICE_UPDATE_FIELDS, bp::update_price) => crate::http::billing::update_price),
    op!(POST "/subscriptions" [billing::CREATE_SUBSCRIPTION] -> One(Subscription), billing::parse_create_subscription => crate::http::billing::create_subscription),
    op!(GET "/subscriptions" [billing::LIST_SUBSCRIPTIONS] -> List(Subscription), billing::parse_list_subscriptions => list::<kind::Subscription>),
    op!(GET "/subscriptions/{id}" [NONE] -> One(Subscription), id_alone => retrieve::<kind::Subscription>),
    op!(POST "/subscriptions/{id}" [bp::SUBSCRIPTION_UPDATE_FIELDS] -> One(Subscription), |i| with_id(i, bp::SUBSCRIPTION_UPDATE_FIELDS, bp::update_subscription) => crate::http::billing::update_subscription),
    op!(DELETE "/subscriptions/{id}" [NONE] -> One(Subscription), id_alone => crate::http::billing::cancel_subscription),
    op!(POST "/subscriptions/{id}/resume" [billing::RESUME_SUBSCRIPTION] -> One(Subscription), billing::parse_resume_subscription => crate::http::billing::resume_subscription),
    op!(GET "/invoices" [billing::LIST_INVOICES] -> List(Invoice), billing::parse_list_invoices => list::<kind::Invoice>),
    op!(GET "/invoices/{id}" [NONE] -> One(Invoice), id_alone => retrieve::<kind::Invoice>),
    op!(POST "/invoices/create_preview" [billing::CREATE_PREVIEW] -> One(Invoice), billing::parse_create_preview => billing::create_preview),
    op!(POST "/invoices/{id}/finalize" [NONE] -> One(Invoice), id_alone => billing::finalize_invoice),
    op!(POST "/invoices/{id}/pay" [bp::PAY_INVOICE_FIELDS] -> One(Invoice), |i| with_id(i, bp::PAY_INVOICE_FIELDS, bp::pay_invoice) => crate::http::billing::pay_invoice),
    op!(POST "/invoices/{id}/void" [NONE] -> One(Invoice), id_alone => crate::http::billing::void_invoice),
    op!(POST "/test_helpers/test_clocks" [bp::CLOCK_FIELDS] -> One(TestClock), |i| with(i, bp::CLOCK_FIELDS, bp::create_clock) => crate::http::billing::create_test_clock),
    op!(GET "/test_helpers/test_clocks" [NONE] -> List(TestClock), billing::parse_list_clocks => list::<kind::TestClock>),
    op!(GET "/test_helpers/test_clocks/{id}" [NONE] -> One(TestClock), id_alone => retrieve::<kind::TestClock>),
    op!(DELETE "/test_helpers/test_clocks/{id}" [NONE] -> One(TestClock), id_alone => crate::http::billing::delete_test_clock),
    op!(POST "/test_helpers/test_clocks/{id}/advance" [bp::ADVANCE_FIELDS] -> One(TestClock), |i| with_id(i, bp::ADVANCE_FIELDS, bp::advance_clock) => crate::http::billing::advance_test_clock),
    op!(GET "/balance" [NONE] -> One(Balance), balance::parse_balance => crate::http::balance::retrieve_balance),
    op!(GET "/balance_transactions" [balance::LIST_TRANSACTIONS] -> List(BalanceTransaction), balance::parse_list_transactions => crate::http::balance::list_balance_transactions),
    op!(GET "/balance_transactions/{id}" [NONE] -> One(BalanceTransaction), id_alone => retrieve::<kind::BalanceTransaction>),
    op!(POST "/payouts" [balance::CREATE_PAYOUT] -> One(Payout), balance::parse_create_payout => balance::create_payout),
    op!(GET "/payouts" [balance::LIST_PAYOUTS] -> List(Payout), balance::parse_list_payouts => list::<kind::Payout>),
    op!(GET "/payouts/{id}" [NONE] -> One(Payout), id_alone => retrieve::<kind::Payout>),
    op!(POST "/payouts/{id}/cancel" [NONE] -> One(Payout), id_alone => crate::http::payouts::cancel_payout),
    op!(GET "/disputes" [balance::LIST_DISPUTES] -> List(Dispute), balance::parse_list_disputes => list::<kind::Dispute>),
    op!(GET "/disputes/{id}" [NONE] -> One(Dispute), id_alone => retrieve::<kind::Dispute>),
    op!(POST "/disputes/{id}" [crate::http::disputes::UPDATE_FIELDS] -> One(Dispute), |i| with_id(i, crate::http::disputes::UPDATE_FIELDS, crate::http::disputes::parse_update_from) => crate::http::disputes::update_dispute),
    op!(POST "/disputes/{id}/close" [NONE] -> One(Dispute), id_alone => crate::http::disputes::close_dispute),
    op!(POST "/webhook_endpoints" [webhooks::CREATE] -> One(WebhookEndpoint), webhooks::parse_create => crate::http::webhook_endpoints::create_endpoint),
    op!(GET "/webhook_endpoints" [NONE] -> List(WebhookEndpoint), billing::parse_list_clocks => list::<kind::WebhookEndpoint>),
    op!(GET "/webhook_endpoints/{id}" [NONE] -> One(WebhookEndpoint), id_alone => retrieve::<kind::WebhookEndpoint>),
    op!(POST "/webhook_endpoints/{id}" [webhooks::UPDATE] -> One(WebhookEndpoint), webhooks::parse_update => crate::http::webhook_endpoints::update_endpoint),
    op!(DELETE "/webhook_endpoints/{id}" [NONE] -> One(WebhookEndpoint), id_alone => crate::http::webhook_endpoints::delete_endpoint),
    op!(GET "/events" [webhooks::LIST_EVENTS] -> Answer::Events(true), webhooks::parse_list_events => webhooks::list_events),
    op!(GET "/events/{id}" [NONE] -> Answer::Events(false), webhooks::parse_event => webhooks::retrieve_event),
];

/// The operation `method path` names (`path` without `/v1`) and its `{id}` segment; a literal
/// segment wins over `{id}`. `None`: Tender does not serve it.
pub fn resolve<'p>(method: &str, path: &'p str) -> Option<(&'static StripeRoute, Option<&'p str>)> {
    let segments: Vec<&str> = path.split('/').collect();
    let mut best = None;
    for route in ROUTES.iter().filter(|r| r.method.as_str() == method) {
        match match_template(route.path, &segments) {
            Some(id) if best.is_none() || id.is_none() => best = Some((route, id)),
            _ => {}
        }
    }
    best
}

/// Decodes one `/v1` request as the gate and the operation's parser would, without a server or
/// a store: `(method, path, params)` → the command, or the 4xx it would answer first. `path`
/// is without `/v1`; `params` is the form body of a `POST` or the query string otherwise
/// (`expand[]` taken out as the gate does). An unknown route is `NotFound { kind: "route" }`.
/// The fuzz target `stripe_decode` calls it.
pub fn decode(method: &str, path: &str, params: &[u8]) -> Result<Decoded, CoreError> {
    let (route, id) = resolve(method, path).ok_or_else(|| CoreError::NotFound {
        kind: "route",
        id: path.to_string(),
    })?;
    let mut body = super::form::decode(params)?;
    if let Some(map) = body.as_object_mut() {
        map.remove("expand");
        map.remove("client_secret");
    }
    let input = Input {
        path: format!("/v1{path}"),
        id: id.unwrap_or_default().to_string(),
        query: None,
        body,
    };
    ((route.op)().decode)(input)
}

/// The generated part of `docs/stripe-compatibility.md`: every operation of [`ROUTES`] with its
/// parameters, the expansions [`super::answer`] makes and the test tokens; a test holds the
/// document to it.
pub fn compatibility_reference() -> String {
    let mut out = String::from(
        "| operation | parameters (besides `expand[]`) | answers with |\n|---|---|---|\n",
    );
    for route in ROUTES {
        let mut params: Vec<String> = route.params.iter().map(|p| format!("`{p}`")).collect();
        if route.answer.is_list() {
            params.extend(super::params::LIST.iter().map(|p| format!("`{p}`")));
        }
        let params = if params.is_empty() {
            "—".to_string()
        } else {
            params.join(", ")
        };
        let answer = match route.answer {
            Answer::One(shape) => format!("{shape:?}"),
            Answer::List(shape) => format!("list of {shape:?}"),
            Answer::Events(false) => "Event".to_string(),
            Answer::Events(true) => "list of Event".to_string(),
        };
        let caller = match route.caller {
            Caller::Secret => "",
            Caller::Publishable => " (publishable key too)",
            Caller::ClientSecret => " (publishable key too, with `client_secret`)",
        };
        out.push_str(&format!(
            "| `{} /v1{}`{caller} | {params} | {answer} |\n",
            route.method, route.path
        ));
    }
    out.push_str("\nExpansions (`expand[]`; on a list, `data.` before the field):\n\n| object | field |\n|---|---|\n");
    for (shape, field) in super::answer::EXPANDABLE {
        out.push_str(&format!("| {shape:?} | `{field}` |\n"));
    }
    out.push_str("\nTest-mode tokens (in live mode they name nothing):\n\n| token | test card |\n|---|---|\n");
    for (token, number) in super::test_tokens::TOKENS {
        out.push_str(&format!("| `{token}` | {number} |\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const MARKER: &str = "<!-- generated from crates/tender-server/src/stripe/routes.rs by compatibility_reference(); do not edit below -->\n";

    /// `docs/stripe-compatibility.md` below its marker is [`compatibility_reference`]; with
    /// `TENDER_WRITE_DOCS=1` the test rewrites it instead.
    #[test]
    fn the_compatibility_document_is_generated_from_the_route_table() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../docs/stripe-compatibility.md"
        );
        let doc = std::fs::read_to_string(path).expect("docs/stripe-compatibility.md");
        let (prose, generated) = doc.split_once(MARKER).expect("the marker");
        let expected = compatibility_reference();
        if std::env::var("TENDER_WRITE_DOCS").as_deref() == Ok("1") {
            std::fs::write(path, format!("{prose}{MARKER}{expected}")).expect("write");
            return;
        }
        assert_eq!(
            generated, expected,
            "docs/stripe-compatibility.md is stale: TENDER_WRITE_DOCS=1 cargo test -p tender-server --lib compatibility"
        );
    }

    #[test]
    fn every_operation_resolves_to_itself() {
        for route in ROUTES {
            let path = route.path.replace("{id}", "x_1");
            let (found, _) = resolve(route.method.as_str(), &path).expect("resolves");
            assert_eq!(
                (found.method.as_str(), found.path),
                (route.method.as_str(), route.path)
            );
        }
    }
}
