//! The answer of a `/v1` request in Stripe's shape: the `/v2` answer the operation gave (or
//! the one an idempotency key kept) shown by `tender_core::stripe`, lists item by item, errors
//! as Stripe's, and the `expand[]` the request asked for filled in.
//!
//! Expansions (`expand[]=latest_charge`, `data.customer` on a list), one level deep:
//!
//! | object | field | from |
//! |---|---|---|
//! | PaymentIntent | `latest_charge` | the same payment, as its charge |
//! | PaymentIntent, Charge | `payment_method` | the saved payment method, else the card the payment keeps |
//! | PaymentIntent, Charge, PaymentMethod | `customer` | the customer |
//! | Charge | `payment_intent` | the same payment, as its PaymentIntent |
//! | Refund, Dispute | `payment_intent`, `charge` | its payment |
//! | Charge, Refund | `balance_transaction` | the transaction it booked |
//! | BalanceTransaction | `source` | the charge it booked |
//! | Price | `product` | the product |
//! | Subscription | `customer`, `latest_invoice`, `default_payment_method`, `pending_setup_intent` | those objects |
//! | Invoice | `customer` | the customer |
//! | Invoice | `confirmation_secret` | the client secret of the intent an open invoice waits on |
//! | SetupIntent | `payment_method`, `customer` | those objects |
//! | Checkout Session | `customer`, `payment_intent`, `subscription`, `setup_intent` | those objects |
//! | Checkout Session | `payment_link` | the link that opened it |
//! | Checkout Session, PaymentLink | `line_items` | its lines, as a list |
//!
//! Any other expansion is 400 before the operation runs ([`check_expand`]).

use axum::body::Body;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::Response;
use serde_json::Value;
use tender_core::auth::Scope;
use tender_core::error::CoreError;
use tender_core::ids::{kind, Id};
use tender_core::stripe::{errors, ids, Shape};

use super::routes::Answer;
use crate::http::error::json_response;
use crate::state::AppState;

/// Where an expanded field's object comes from.
#[derive(Debug, Clone, Copy)]
enum Source {
    /// The payment being shown, in another shape.
    SamePayment(Shape),
    /// The object the field names, fetched.
    Fetched(Shape),
    /// The saved payment method the field names, else the payment's own snapshot of it.
    PaymentMethodOf,
    /// Filled in from the object itself (an invoice's `confirmation_secret`), or already there
    /// (its `payments`): the last step of a path.
    InPlace,
}

/// Every expansion: the object and its field (generated into docs/stripe-compatibility.md).
pub const EXPANDABLE: &[(Shape, &str)] = &[
    (Shape::PaymentIntent, "latest_charge"),
    (Shape::PaymentIntent, "payment_method"),
    (Shape::PaymentIntent, "customer"),
    (Shape::Charge, "payment_intent"),
    (Shape::Charge, "payment_method"),
    (Shape::Charge, "customer"),
    (Shape::PaymentMethod, "customer"),
    (Shape::Refund, "payment_intent"),
    (Shape::Refund, "charge"),
    (Shape::Charge, "balance_transaction"),
    (Shape::Refund, "balance_transaction"),
    (Shape::Price, "product"),
    (Shape::Subscription, "customer"),
    (Shape::Subscription, "latest_invoice"),
    (Shape::Subscription, "default_payment_method"),
    (Shape::Invoice, "customer"),
    (Shape::BalanceTransaction, "source"),
    (Shape::Dispute, "charge"),
    (Shape::Dispute, "payment_intent"),
    (Shape::SetupIntent, "payment_method"),
    (Shape::SetupIntent, "customer"),
    (Shape::Subscription, "pending_setup_intent"),
    (Shape::Invoice, "confirmation_secret"),
    (Shape::Invoice, "payments"),
    (Shape::CheckoutSession, "line_items"),
    (Shape::CheckoutSession, "customer"),
    (Shape::CheckoutSession, "payment_intent"),
    (Shape::CheckoutSession, "subscription"),
    (Shape::CheckoutSession, "setup_intent"),
    (Shape::CheckoutSession, "payment_link"),
    (Shape::PaymentLink, "line_items"),
];

fn expandable(shape: Shape, field: &str) -> Option<Source> {
    use Shape::*;
    if !EXPANDABLE.contains(&(shape, field)) {
        return None;
    }
    Some(match (shape, field) {
        (PaymentIntent, "latest_charge") => Source::SamePayment(Charge),
        (Charge, "payment_intent") => Source::SamePayment(PaymentIntent),
        (PaymentIntent | Charge, "payment_method") => Source::PaymentMethodOf,
        (_, "customer") => Source::Fetched(Customer),
        (Refund | Dispute | CheckoutSession, "payment_intent") => Source::Fetched(PaymentIntent),
        (CheckoutSession, "subscription") => Source::Fetched(Subscription),
        (CheckoutSession, "setup_intent") => Source::Fetched(SetupIntent),
        (CheckoutSession | PaymentLink, "line_items") => Source::InPlace,
        (CheckoutSession, "payment_link") => Source::Fetched(PaymentLink),
        (Refund | Dispute, "charge") | (BalanceTransaction, "source") => Source::Fetched(Charge),
        (_, "balance_transaction") => Source::Fetched(BalanceTransaction),
        (Price, "product") => Source::Fetched(Product),
        (Subscription, "latest_invoice") => Source::Fetched(Invoice),
        (Subscription, "default_payment_method") | (SetupIntent, "payment_method") => {
            Source::Fetched(PaymentMethod)
        }
        (Subscription, "pending_setup_intent") => Source::Fetched(SetupIntent),
        (Invoice, "confirmation_secret" | "payments") => Source::InPlace,
        _ => return None,
    })
}

/// The shape an expansion of `field` on a `shape` yields.
fn target(shape: Shape, field: &str) -> Option<Shape> {
    Some(match expandable(shape, field)? {
        Source::SamePayment(s) | Source::Fetched(s) => s,
        Source::PaymentMethodOf => Shape::PaymentMethod,
        Source::InPlace => return None,
    })
}

/// The path an expansion names on each object of `answer` (`data.` taken off a list's), or
/// 400 if some step of it cannot be expanded. Paths go at most [`MAX_DEPTH`] steps deep.
pub fn check_expand(answer: Answer, expand: &[String]) -> Result<Vec<String>, CoreError> {
    expand
        .iter()
        .enumerate()
        .map(|(i, path)| {
            let refuse = || {
                CoreError::invalid(
                    format!("expand[{i}]"),
                    "parameter_invalid",
                    format!("This property cannot be expanded ({path})."),
                )
            };
            let mut shape = answer.shape().ok_or_else(refuse)?;
            let rest = if answer.is_list() {
                path.strip_prefix("data.")
            } else {
                Some(path.as_str())
            }
            .ok_or_else(refuse)?;
            let steps: Vec<&str> = rest.split('.').collect();
            if steps.len() > MAX_DEPTH {
                return Err(refuse());
            }
            for (n, step) in steps.iter().enumerate() {
                if matches!(expandable(shape, step), Some(Source::InPlace)) && n + 1 == steps.len()
                {
                    break;
                }
                shape = target(shape, step).ok_or_else(refuse)?;
            }
            Ok(rest.to_string())
        })
        .collect()
}

/// Deepest expansion (`latest_invoice.customer` is 2).
pub const MAX_DEPTH: usize = 3;

/// What of a PaymentIntent a publishable key sees (Stripe's list for a client-secret retrieve):
/// not its customer, metadata or charges.
const PUBLISHABLE_INTENT: &[&str] = &[
    "id",
    "object",
    "amount",
    "canceled_at",
    "cancellation_reason",
    "capture_method",
    "client_secret",
    "confirmation_method",
    "created",
    "currency",
    "description",
    "last_payment_error",
    "livemode",
    "next_action",
    "payment_method",
    "payment_method_types",
    "receipt_email",
    "setup_future_usage",
    "shipping",
    "status",
];

/// What of a SetupIntent a publishable key sees (Stripe's list for a client-secret retrieve):
/// not its customer or metadata.
const PUBLISHABLE_SETUP: &[&str] = &[
    "id",
    "object",
    "cancellation_reason",
    "client_secret",
    "created",
    "description",
    "last_setup_error",
    "livemode",
    "next_action",
    "payment_method",
    "payment_method_types",
    "status",
    "usage",
];

/// The fields of an intent of `shape` a browser holding its client secret may see; `None`:
/// a publishable key sees the whole object (a payment method it made).
fn browser_fields(shape: Shape) -> Option<(&'static str, &'static [&'static str])> {
    match shape {
        Shape::PaymentIntent => Some(("payment_intent", PUBLISHABLE_INTENT)),
        Shape::SetupIntent => Some(("setup_intent", PUBLISHABLE_SETUP)),
        _ => None,
    }
}

/// `intent` cut to `fields`.
fn for_browser(intent: &mut Value, fields: &[&str]) {
    if let Some(map) = intent.as_object_mut() {
        map.retain(|k, _| fields.contains(&k.as_str()));
    }
}

/// The response `status`/`body` (a `/v2` answer) shown as Stripe's, with `expand` (checked by
/// [`check_expand`]) filled in; to a publishable key, an intent as a browser sees it.
pub async fn show(
    state: &AppState,
    scope: Option<&Scope>,
    answer: Answer,
    expand: &[String],
    publishable: bool,
    status: StatusCode,
    body: &[u8],
) -> Response {
    let mut resp = show_all(state, scope, answer, expand, status, body).await;
    let Some((name, fields)) = answer.shape().and_then(browser_fields) else {
        return resp;
    };
    if !publishable {
        return resp;
    }
    let (parts, bytes) = resp.into_parts();
    let bytes = axum::body::to_bytes(bytes, usize::MAX)
        .await
        .unwrap_or_default();
    let Ok(mut v) = serde_json::from_slice::<Value>(&bytes) else {
        return internal();
    };
    match v.get_mut("error") {
        Some(e) => e
            .get_mut(name)
            .into_iter()
            .for_each(|i| for_browser(i, fields)),
        None => for_browser(&mut v, fields),
    }
    resp = json_response(parts.status, serde_json::to_vec(&v).unwrap_or_default());
    resp
}

async fn show_all(
    state: &AppState,
    scope: Option<&Scope>,
    answer: Answer,
    expand: &[String],
    status: StatusCode,
    body: &[u8],
) -> Response {
    let Ok(v2) = serde_json::from_slice::<Value>(body) else {
        return internal();
    };
    if !status.is_success() {
        return error(state, scope, status, &v2).await;
    }
    let Some(shape) = answer.shape() else {
        return json_response(status, body.to_vec());
    };
    let shown = if v2.get("object").and_then(Value::as_str) == Some("list") {
        let mut list = v2.clone();
        let items = v2["data"].as_array().cloned().unwrap_or_default();
        let mut shown = Vec::with_capacity(items.len());
        // A payment not tried yet has no charge.
        for item in items
            .iter()
            .filter(|i| shape != Shape::Charge || has_charge(i))
        {
            match one(state, scope, shape, item, expand).await {
                Ok(v) => shown.push(v),
                Err(e) => return core_error(state, scope, &e).await,
            }
        }
        list["data"] = Value::Array(shown);
        list
    } else {
        match one(state, scope, shape, &v2, expand).await {
            Ok(v) => v,
            Err(e) => return core_error(state, scope, &e).await,
        }
    };
    json_response(status, serde_json::to_vec(&shown).unwrap_or_default())
}

/// Whether the payment `v2` was tried (a PaymentIntent not confirmed yet has no charge).
fn has_charge(v2: &Value) -> bool {
    !matches!(
        v2.get("status").and_then(Value::as_str),
        Some("requires_payment_method" | "requires_confirmation")
    )
}

/// One object, shown and expanded.
async fn one(
    state: &AppState,
    scope: Option<&Scope>,
    shape: Shape,
    v2: &Value,
    expand: &[String],
) -> Result<Value, CoreError> {
    let shapes = state.services.stripe_shapes();
    if shape == Shape::Charge && !has_charge(v2) {
        let id = v2.get("id").and_then(Value::as_str).unwrap_or_default();
        return Err(CoreError::NotFound {
            kind: "charge",
            id: ids::charge(id),
        });
    }
    let mut shown = shapes.show(shape, v2);
    expand_into(state, scope, shape, v2, &mut shown, expand).await?;
    Ok(shown)
}

/// Fills in each of `paths` (checked) on `shown`, the object `v2` shows as `shape`: the first
/// step here, the rest on the object it yields.
async fn expand_into(
    state: &AppState,
    scope: Option<&Scope>,
    shape: Shape,
    v2: &Value,
    shown: &mut Value,
    paths: &[String],
) -> Result<(), CoreError> {
    let mut fields: Vec<(&str, Vec<String>)> = Vec::new();
    for path in paths {
        let (head, rest) = match path.split_once('.') {
            Some((h, r)) => (h, Some(r.to_string())),
            None => (path.as_str(), None),
        };
        match fields.iter_mut().find(|(f, _)| *f == head) {
            Some((_, rests)) => rests.extend(rest),
            None => fields.push((head, rest.into_iter().collect())),
        }
    }
    for (field, rests) in fields {
        if let Some(Source::InPlace) = expandable(shape, field) {
            fill_in_place(state, v2, shown, field);
            continue;
        }
        let Some(id) = shown.get(field).and_then(Value::as_str).map(str::to_string) else {
            continue;
        };
        let (Some(source), Some(scope)) = (expandable(shape, field), scope) else {
            continue;
        };
        let Some((inner, inner_v2)) = expansion(state, scope, source, v2, &id).await? else {
            continue;
        };
        let mut object = state.services.stripe_shapes().show(inner, &inner_v2);
        if !rests.is_empty() {
            Box::pin(expand_into(
                state,
                Some(scope),
                inner,
                &inner_v2,
                &mut object,
                &rests,
            ))
            .await?;
        }
        shown[field] = object;
    }
    Ok(())
}

/// An expansion made from the object itself: an open invoice's `confirmation_secret` (the
/// client secret of the intent it waits on, which a browser confirms), else `null`; its
/// `payments` are there already.
fn fill_in_place(state: &AppState, v2: &Value, shown: &mut Value, field: &str) {
    if field == "line_items" {
        let lines = v2.pointer("/line_items/data").and_then(Value::as_array);
        let id = v2.get("id").and_then(Value::as_str).unwrap_or_default();
        shown[field] = serde_json::json!({
            "object": "list",
            "url": match id.starts_with("plink_") {
                true => format!("/v1/payment_links/{id}/line_items"),
                false => format!("/v1/checkout/sessions/{id}/line_items"),
            },
            "has_more": false,
            "data": lines.into_iter().flatten().map(tender_core::stripe::checkout::line_item).collect::<Vec<_>>(),
        });
        return;
    }
    if field != "confirmation_secret" {
        return;
    }
    let waiting = v2
        .get("payment")
        .and_then(Value::as_str)
        .filter(|_| v2.get("status").and_then(Value::as_str) == Some("open"));
    shown[field] = match waiting {
        Some(payment) => serde_json::json!({
            "client_secret": state.services.stripe_shapes().client_secret(payment),
            "type": "payment_intent",
        }),
        None => Value::Null,
    };
}

/// The object an expansion yields, as its shape and `/v2` JSON; `None` when the field names
/// an object of another kind (a refund's transaction's `source`).
async fn expansion(
    state: &AppState,
    scope: &Scope,
    source: Source,
    v2: &Value,
    id: &str,
) -> Result<Option<(Shape, Value)>, CoreError> {
    Ok(match source {
        Source::SamePayment(s) => Some((s, v2.clone())),
        // Filled in by `expand_into` before it gets here.
        Source::InPlace => None,
        Source::Fetched(s) => match fetch(state, scope, s, id).await {
            Ok(v2) => Some((s, v2)),
            Err(CoreError::NotFound { .. }) => None,
            Err(e) => return Err(e),
        },
        Source::PaymentMethodOf => {
            let pm = Id::<kind::PaymentMethod>::found(id.to_string())?;
            match state.services.retrieve(scope, &pm).await {
                Ok(raw) => Some((Shape::PaymentMethod, parse(&raw)?)),
                // A one-time card: the payment's own snapshot of it.
                Err(CoreError::NotFound { .. }) => {
                    let mut snapshot = v2["payment_method"].clone();
                    if let Some(obj) = snapshot.as_object_mut() {
                        for key in ["livemode", "created"] {
                            obj.entry(key).or_insert_with(|| v2[key].clone());
                        }
                    }
                    Some((Shape::PaymentMethod, snapshot))
                }
                Err(e) => return Err(e),
            }
        }
    })
}

fn parse(raw: &str) -> Result<Value, CoreError> {
    serde_json::from_str(raw).map_err(|e| CoreError::internal("read a rendered object", e))
}

/// The `/v2` JSON of the object `id` that `shape` shows.
async fn fetch(
    state: &AppState,
    scope: &Scope,
    shape: Shape,
    id: &str,
) -> Result<Value, CoreError> {
    let services = &state.services;
    macro_rules! get {
        ($kind:ty) => {
            services
                .retrieve(scope, &Id::<$kind>::found(ids::tender(id))?)
                .await?
        };
    }
    let raw = match shape {
        Shape::PaymentIntent | Shape::Charge => get!(kind::Payment),
        Shape::Customer => get!(kind::Customer),
        Shape::PaymentMethod => get!(kind::PaymentMethod),
        Shape::Refund => get!(kind::Refund),
        Shape::Product => get!(kind::Product),
        Shape::Price => get!(kind::Price),
        Shape::Subscription => get!(kind::Subscription),
        Shape::Invoice => get!(kind::Invoice),
        Shape::TestClock => get!(kind::TestClock),
        Shape::BalanceTransaction => get!(kind::BalanceTransaction),
        Shape::Payout => get!(kind::Payout),
        Shape::Dispute => get!(kind::Dispute),
        Shape::WebhookEndpoint => get!(kind::WebhookEndpoint),
        Shape::SetupIntent => get!(kind::SetupIntent),
        Shape::CheckoutSession => get!(kind::CheckoutSession),
        Shape::PaymentLink => get!(kind::PaymentLink),
        Shape::Balance | Shape::LineItem | Shape::EarlyFraudWarning => {
            return Err(CoreError::internal(
                "expand",
                std::io::Error::other("the balance is not an object with an id"),
            ))
        }
    };
    parse(&raw)
}

/// A failure while showing the answer, as Stripe's error.
async fn core_error(state: &AppState, scope: Option<&Scope>, e: &CoreError) -> Response {
    let request_id = crate::http::error::current_request_id();
    let (status, body) =
        crate::http::error::error_body(crate::http::error::Failure::Core(e), &request_id);
    match serde_json::from_slice::<Value>(&body) {
        Ok(v2) => Box::pin(error(state, scope, status, &v2)).await,
        Err(_) => internal(),
    }
}

/// A `/v2` error as Stripe's; a decline with its PaymentIntent (or SetupIntent).
pub async fn error(
    state: &AppState,
    scope: Option<&Scope>,
    status: StatusCode,
    v2: &Value,
) -> Response {
    let mut intent = None;
    if let (Some((shape, id)), Some(scope)) = (errors::declined(v2), scope) {
        if let Ok(object) = fetch(state, scope, shape, id).await {
            intent = Some(state.services.stripe_shapes().show(shape, &object));
        }
    }
    let (status, body) = errors::error(status.as_u16(), v2, intent);
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    json_response(status, serde_json::to_vec(&body).unwrap_or_default())
}

fn internal() -> Response {
    let body = serde_json::json!({"error": {"type": "api_error", "message": "An internal error occurred; the Request-Id header identifies it in our logs."}});
    json_response(
        StatusCode::INTERNAL_SERVER_ERROR,
        serde_json::to_vec(&body).unwrap_or_default(),
    )
}

/// `resp` with the headers of `from` a client needs (`Retry-After`, `WWW-Authenticate`,
/// `Idempotent-Replayed`, `Connection`).
pub fn keep_headers(mut resp: Response, from: &axum::http::HeaderMap) -> Response {
    for name in [
        header::RETRY_AFTER,
        header::WWW_AUTHENTICATE,
        header::CONNECTION,
        header::HeaderName::from_static("idempotent-replayed"),
    ] {
        if let Some(v) = from.get(&name) {
            resp.headers_mut().insert(name, v.clone());
        }
    }
    resp
}

/// A JSON body already in Stripe's shape.
pub fn stripe_json(status: StatusCode, body: &Value) -> Response {
    let mut resp = Response::new(Body::from(serde_json::to_vec(body).unwrap_or_default()));
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    resp
}
