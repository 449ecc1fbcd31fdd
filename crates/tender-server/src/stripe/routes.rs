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

use super::{charges, customers, payment_intents, payment_methods, refunds};
use crate::http::operation::{endpoint, match_template, Op};
use crate::state::AppState;

/// What an operation answers with: one object, or a list of them, in `Shape`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    One(Shape),
    List(Shape),
}

impl Answer {
    pub fn shape(self) -> Shape {
        match self {
            Answer::One(s) | Answer::List(s) => s,
        }
    }
}

/// Who may call an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caller {
    /// A secret key only.
    Secret,
    /// A publishable key too (a browser tokenising a card).
    Publishable,
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

/// No parameters.
const NONE: &[&str] = &[];

/// Every operation of `/v1`.
pub const ROUTES: &[StripeRoute] = &[
    op!(POST "/payment_intents" [payment_intents::CREATE] -> One(PaymentIntent), payment_intents::parse_create => payment_intents::create),
    op!(GET "/payment_intents" [payment_intents::LIST] -> List(PaymentIntent), payment_intents::parse_list => crate::http::operation::list::<tender_core::ids::kind::Payment>),
    op!(GET "/payment_intents/{id}" [NONE] -> One(PaymentIntent), payment_intents::parse_id => crate::http::operation::retrieve),
    op!(POST "/payment_intents/{id}" [payment_intents::UPDATE] -> One(PaymentIntent), payment_intents::parse_update => crate::http::payments::update_payment),
    op!(POST "/payment_intents/{id}/confirm" [payment_intents::CONFIRM] -> One(PaymentIntent), payment_intents::parse_confirm => payment_intents::confirm),
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
    op!(POST "/refunds" [refunds::CREATE] -> One(Refund), refunds::parse_create => crate::http::refunds::create_refund),
    op!(GET "/refunds" [refunds::LIST] -> List(Refund), refunds::parse_list => crate::http::operation::list::<tender_core::ids::kind::Refund>),
    op!(GET "/refunds/{id}" [NONE] -> One(Refund), refunds::parse_id => crate::http::operation::retrieve),
    op!(POST "/refunds/{id}" [refunds::UPDATE] -> One(Refund), refunds::parse_update => crate::http::refunds::update_refund),
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
