//! Request decoding without a server or a store: `(method, path, query, body bytes)` → the
//! domain command the endpoint's handler would hand to its service, or the 4xx it would answer
//! first. It calls the very functions the handlers call ([`parse_json_body`], [`path_id`], each
//! module's `parse_*`), so the fuzz targets (`fuzz/fuzz_targets/request_decode.rs`) exercise
//! the real parsing of every endpoint.
//!
//! What it leaves out: authentication, the rate limit, the 64 KiB and `Content-Type` rules and
//! idempotency (the pipeline's), and everything a service checks against stored state.

use serde_json::Value;
use tender_core::card::CardInput;
use tender_core::error::CoreError;
use tender_core::ids::IdKind;
use tender_core::payment::CancellationReason;
use tender_core::service::connectors::ConnectorFields;
use tender_core::service::customers::CustomerFields;
use tender_core::service::payments::{CreatePayment, UpdatePayment};
use tender_core::service::refunds::CreateRefund;
use tender_core::service::webhooks::EndpointFields;
use tender_core::service::ListParams;
use tender_core::store::Field;

use super::pipeline::parse_json_body;
use super::{
    balance, billing, connectors, customers, disputes, events, path_id, payment_methods, payments,
    payouts, refunds, webhook_endpoints,
};

/// A list request: page and filters.
pub type ListRequest = (ListParams, Vec<(Field, String)>);

/// What a handler would hand to its service.
#[derive(Debug)]
pub enum Command {
    CreatePayment(CreatePayment),
    RetrievePayment(String),
    UpdatePayment(String, UpdatePayment),
    CapturePayment(String, Option<i64>),
    CancelPayment(String, Option<CancellationReason>),
    ListPayments(ListRequest),
    CreatePaymentMethod(CardInput, Vec<(String, String)>),
    RetrievePaymentMethod(String),
    AttachPaymentMethod(String, String),
    DetachPaymentMethod(String),
    ListPaymentMethods(ListParams, String),
    CreateCustomer(CustomerFields),
    RetrieveCustomer(String),
    UpdateCustomer(String, CustomerFields),
    DeleteCustomer(String),
    ListCustomers(ListRequest),
    CreateRefund(CreateRefund),
    RetrieveRefund(String),
    UpdateRefund(String, Vec<(String, String)>),
    ListRefunds(ListRequest),
    RetrieveEvent(String),
    ListEventDeliveries(String),
    ResendEvent(String, String),
    ListEvents(ListRequest),
    /// The event to start after (`starting_after`; `Last-Event-ID` is a header).
    StreamEvents(Option<String>),
    CreateWebhookEndpoint(EndpointFields),
    RetrieveWebhookEndpoint(String),
    UpdateWebhookEndpoint(String, EndpointFields),
    DeleteWebhookEndpoint(String),
    RollWebhookSecret(String, Option<i64>),
    ListWebhookEndpoints(ListParams),
    CreateConnector(ConnectorFields),
    RetrieveConnector(String),
    UpdateConnector(String, ConnectorFields),
    DeleteConnector(String),
    ListConnectors(ListParams),
    RetrieveBalance,
    ListBalanceTransactions(ListRequest),
    RetrieveBalanceTransaction(String),
    CreatePayout(tender_core::service::payouts::CreatePayout),
    RetrievePayout(String),
    CancelPayout(String),
    ListPayouts(ListRequest),
    RetrieveDispute(String),
    UpdateDispute(String, tender_core::service::disputes::UpdateDispute),
    CloseDispute(String),
    ListDisputes(ListRequest),
    CreateProduct(billing_cmd::CreateProduct),
    RetrieveProduct(String),
    UpdateProduct(String, billing_cmd::UpdateProduct),
    DeleteProduct(String),
    ListProducts(ListRequest),
    CreatePrice(billing_cmd::CreatePrice),
    RetrievePrice(String),
    UpdatePrice(String, billing_cmd::UpdatePrice),
    ListPrices(ListRequest),
    CreateSubscription(billing_cmd::CreateSubscription),
    RetrieveSubscription(String),
    UpdateSubscription(String, billing_cmd::UpdateSubscription),
    CancelSubscription(String),
    ListSubscriptions(ListRequest),
    RetrieveInvoice(String),
    PayInvoice(String, Option<String>),
    VoidInvoice(String),
    ListInvoices(ListRequest),
    CreateTestClock(i64, Option<String>),
    RetrieveTestClock(String),
    AdvanceTestClock(String, i64),
    DeleteTestClock(String),
    ListTestClocks(ListParams),
}

/// The commands of recurring billing, under one name.
mod billing_cmd {
    pub use tender_core::service::billing::catalog::{
        CreatePrice, CreateProduct, UpdatePrice, UpdateProduct,
    };
    pub use tender_core::service::billing::subscriptions::{
        CreateSubscription, UpdateSubscription,
    };
}

/// Decodes one request as the router, the pipeline and the handler would. `method` is upper
/// case as on the wire; `path` may carry the `/v2` prefix. An unknown route or method is `NotFound { kind: "route" }`.
pub fn decode(
    method: &str,
    path: &str,
    query: Option<&str>,
    body: &[u8],
) -> Result<Command, CoreError> {
    // The pipeline reads a body for these methods only; an empty one is `{}`.
    let m = method;
    let value = if matches!(m, "POST" | "PATCH" | "DELETE" | "PUT") && !body.is_empty() {
        parse_json_body(body)?
    } else {
        Value::Object(Default::default())
    };
    let path = path.strip_prefix("/v2").unwrap_or(path);
    let segments: Vec<&str> = path.strip_prefix('/').unwrap_or(path).split('/').collect();
    let id = |kind: IdKind, name: &'static str, raw: &str| {
        path_id(kind, name, raw.to_string()).map_err(|e| e.0)
    };
    let update = matches!(m, "POST" | "PATCH");
    use Command as C;
    use IdKind as K;
    let cmd = match segments.as_slice() {
        ["payments"] if m == "POST" => C::CreatePayment(payments::parse_create(&value)?),
        ["payments"] if m == "GET" => C::ListPayments(payments::parse_list(query)?),
        ["payments", raw] => {
            let pid = id(K::Payment, "payment", raw)?;
            match m {
                "GET" => C::RetrievePayment(pid),
                _ if update => C::UpdatePayment(pid, payments::parse_update(&value)?),
                _ => return Err(no_route(path)),
            }
        }
        ["payments", raw, "capture"] if m == "POST" => C::CapturePayment(
            id(K::Payment, "payment", raw)?,
            payments::parse_capture(&value)?,
        ),
        ["payments", raw, "cancel"] if m == "POST" => C::CancelPayment(
            id(K::Payment, "payment", raw)?,
            payments::parse_cancel(&value)?,
        ),
        ["payment_methods"] if m == "POST" => {
            let (card, metadata) = payment_methods::parse_create(&value)?;
            C::CreatePaymentMethod(card, metadata)
        }
        ["payment_methods"] if m == "GET" => {
            let (params, customer) = payment_methods::parse_list(query)?;
            C::ListPaymentMethods(params, customer)
        }
        ["payment_methods", raw] if m == "GET" => {
            C::RetrievePaymentMethod(id(K::PaymentMethod, "payment_method", raw)?)
        }
        ["payment_methods", raw, "attach"] if m == "POST" => C::AttachPaymentMethod(
            id(K::PaymentMethod, "payment_method", raw)?,
            payment_methods::parse_attach(&value)?,
        ),
        ["payment_methods", raw, "detach"] if m == "POST" => {
            let pmid = id(K::PaymentMethod, "payment_method", raw)?;
            payment_methods::parse_detach(&value)?;
            C::DetachPaymentMethod(pmid)
        }
        ["customers"] if m == "POST" => C::CreateCustomer(customers::parse_create(&value)?),
        ["customers"] if m == "GET" => C::ListCustomers(customers::parse_list(query)?),
        ["customers", raw] => {
            let cid = id(K::Customer, "customer", raw)?;
            match m {
                "GET" => C::RetrieveCustomer(cid),
                "DELETE" => {
                    customers::parse_delete(&value)?;
                    C::DeleteCustomer(cid)
                }
                _ if update => C::UpdateCustomer(cid, customers::parse_fields(&value)?),
                _ => return Err(no_route(path)),
            }
        }
        ["refunds"] if m == "POST" => C::CreateRefund(refunds::parse_create(&value)?),
        ["refunds"] if m == "GET" => C::ListRefunds(refunds::parse_list(query)?),
        ["refunds", raw] => {
            let rid = id(K::Refund, "refund", raw)?;
            match m {
                "GET" => C::RetrieveRefund(rid),
                _ if update => C::UpdateRefund(rid, refunds::parse_update(&value)?),
                _ => return Err(no_route(path)),
            }
        }
        ["events"] if m == "GET" => C::ListEvents(events::parse_list(query)?),
        ["events", "stream"] if m == "GET" => C::StreamEvents(events::parse_stream(query)?),
        ["events", raw] if m == "GET" => C::RetrieveEvent(id(K::Event, "event", raw)?),
        ["events", raw, "deliveries"] if m == "GET" => {
            C::ListEventDeliveries(id(K::Event, "event", raw)?)
        }
        ["events", raw, "resend"] if m == "POST" => {
            C::ResendEvent(id(K::Event, "event", raw)?, events::parse_resend(&value)?)
        }
        ["webhook_endpoints"] if m == "POST" => {
            C::CreateWebhookEndpoint(webhook_endpoints::parse_fields(&value, false)?)
        }
        ["webhook_endpoints"] if m == "GET" => {
            C::ListWebhookEndpoints(webhook_endpoints::parse_list(query)?)
        }
        ["webhook_endpoints", raw] => {
            let wid = id(K::WebhookEndpoint, "webhook_endpoint", raw)?;
            match m {
                "GET" => C::RetrieveWebhookEndpoint(wid),
                "DELETE" => {
                    webhook_endpoints::parse_delete(&value)?;
                    C::DeleteWebhookEndpoint(wid)
                }
                _ if update => {
                    C::UpdateWebhookEndpoint(wid, webhook_endpoints::parse_fields(&value, true)?)
                }
                _ => return Err(no_route(path)),
            }
        }
        ["webhook_endpoints", raw, "roll_secret"] if m == "POST" => C::RollWebhookSecret(
            id(K::WebhookEndpoint, "webhook_endpoint", raw)?,
            webhook_endpoints::parse_roll_secret(&value)?,
        ),
        ["connectors"] if m == "POST" => {
            C::CreateConnector(connectors::parse_fields(&value, false)?)
        }
        ["connectors"] if m == "GET" => C::ListConnectors(connectors::parse_list(query)?),
        ["connectors", raw] => {
            let cid = id(K::Connector, "connector", raw)?;
            match m {
                "GET" => C::RetrieveConnector(cid),
                "DELETE" => {
                    webhook_endpoints::parse_delete(&value)?;
                    C::DeleteConnector(cid)
                }
                _ if update => C::UpdateConnector(cid, connectors::parse_fields(&value, true)?),
                _ => return Err(no_route(path)),
            }
        }
        ["balance"] if m == "GET" => {
            balance::parse_retrieve(query)?;
            C::RetrieveBalance
        }
        ["balance_transactions"] if m == "GET" => {
            C::ListBalanceTransactions(balance::parse_list(query)?)
        }
        ["balance_transactions", raw] if m == "GET" => {
            C::RetrieveBalanceTransaction(id(K::BalanceTransaction, "balance_transaction", raw)?)
        }
        ["payouts"] if m == "POST" => C::CreatePayout(payouts::parse_create(&value)?),
        ["payouts"] if m == "GET" => C::ListPayouts(payouts::parse_list(query)?),
        ["payouts", raw] if m == "GET" => C::RetrievePayout(id(K::Payout, "payout", raw)?),
        ["payouts", raw, "cancel"] if m == "POST" => {
            let pid = id(K::Payout, "payout", raw)?;
            payouts::parse_cancel(&value)?;
            C::CancelPayout(pid)
        }
        ["disputes"] if m == "GET" => C::ListDisputes(disputes::parse_list(query)?),
        ["disputes", raw] if m == "GET" => C::RetrieveDispute(id(K::Dispute, "dispute", raw)?),
        ["disputes", raw] if m == "POST" => {
            let did = id(K::Dispute, "dispute", raw)?;
            C::UpdateDispute(did, disputes::parse_update(&value)?)
        }
        ["disputes", raw, "close"] if m == "POST" => {
            let did = id(K::Dispute, "dispute", raw)?;
            disputes::parse_close(&value)?;
            C::CloseDispute(did)
        }
        ["products"] if m == "POST" => C::CreateProduct(billing::parse_create_product(&value)?),
        ["products"] if m == "GET" => C::ListProducts(billing::parse_list_products(query)?),
        ["products", raw] => {
            let pid = id(K::Product, "product", raw)?;
            match m {
                "GET" => C::RetrieveProduct(pid),
                "DELETE" => {
                    billing::parse_empty(&value)?;
                    C::DeleteProduct(pid)
                }
                _ if update => C::UpdateProduct(pid, billing::parse_update_product(&value)?),
                _ => return Err(no_route(path)),
            }
        }
        ["prices"] if m == "POST" => C::CreatePrice(billing::parse_create_price(&value)?),
        ["prices"] if m == "GET" => C::ListPrices(billing::parse_list_prices(query)?),
        ["prices", raw] => {
            let pid = id(K::Price, "price", raw)?;
            match m {
                "GET" => C::RetrievePrice(pid),
                _ if update => C::UpdatePrice(pid, billing::parse_update_price(&value)?),
                _ => return Err(no_route(path)),
            }
        }
        ["subscriptions"] if m == "POST" => {
            C::CreateSubscription(billing::parse_create_subscription(&value)?)
        }
        ["subscriptions"] if m == "GET" => {
            C::ListSubscriptions(billing::parse_list_subscriptions(query)?)
        }
        ["subscriptions", raw] => {
            let sid = id(K::Subscription, "subscription", raw)?;
            match m {
                "GET" => C::RetrieveSubscription(sid),
                "DELETE" => {
                    billing::parse_empty(&value)?;
                    C::CancelSubscription(sid)
                }
                _ if update => {
                    C::UpdateSubscription(sid, billing::parse_update_subscription(&value)?)
                }
                _ => return Err(no_route(path)),
            }
        }
        ["invoices"] if m == "GET" => C::ListInvoices(billing::parse_list_invoices(query)?),
        ["invoices", raw] if m == "GET" => C::RetrieveInvoice(id(K::Invoice, "invoice", raw)?),
        ["invoices", raw, "pay"] if m == "POST" => {
            let iid = id(K::Invoice, "invoice", raw)?;
            C::PayInvoice(iid, billing::parse_pay_invoice(&value)?)
        }
        ["invoices", raw, "void"] if m == "POST" => {
            let iid = id(K::Invoice, "invoice", raw)?;
            billing::parse_empty(&value)?;
            C::VoidInvoice(iid)
        }
        ["test_helpers", "test_clocks"] if m == "POST" => {
            let (frozen, name) = billing::parse_create_clock(&value)?;
            C::CreateTestClock(frozen, name)
        }
        ["test_helpers", "test_clocks"] if m == "GET" => {
            C::ListTestClocks(billing::parse_list_clocks(query)?)
        }
        ["test_helpers", "test_clocks", raw] => {
            let cid = id(K::TestClock, "test clock", raw)?;
            match m {
                "GET" => C::RetrieveTestClock(cid),
                "DELETE" => {
                    billing::parse_empty(&value)?;
                    C::DeleteTestClock(cid)
                }
                _ => return Err(no_route(path)),
            }
        }
        ["test_helpers", "test_clocks", raw, "advance"] if m == "POST" => {
            let cid = id(K::TestClock, "test clock", raw)?;
            C::AdvanceTestClock(cid, billing::parse_advance_clock(&value)?)
        }
        _ => return Err(no_route(path)),
    };
    Ok(cmd)
}

fn no_route(path: &str) -> CoreError {
    CoreError::NotFound {
        kind: "route",
        id: path.to_string(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

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
            "test_helpers" => IdKind::TestClock,
            _ => IdKind::WebhookEndpoint,
        };
        template.replace("{id}", &tender_core::ids::generate(kind))
    }

    #[test]
    fn every_route_decodes_or_names_a_parameter() {
        for route in super::super::routes::ROUTES {
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
        assert!(matches!(cmd, Command::CreatePayment(c) if c.amount.get() == 1000));
        let err = decode("POST", "/v2/payments", None, br#"{"status": "succeeded"}"#).unwrap_err();
        assert!(matches!(
            err,
            CoreError::InvalidParam {
                code: "parameter_unknown",
                ..
            }
        ));
        let err = decode("GET", "/v2/payments/pay_nope", None, b"").unwrap_err();
        assert!(matches!(
            err,
            CoreError::NotFound {
                kind: "payment",
                ..
            }
        ));
        let err = decode("POST", "/v2/customers", None, b"{\xff}").unwrap_err();
        assert!(matches!(
            err,
            CoreError::InvalidParam {
                code: "invalid_json",
                ..
            }
        ));
        let err = decode("GET", "/v2/refunds", Some("limit=100000"), b"").unwrap_err();
        assert!(matches!(err, CoreError::InvalidParam { .. }));
        let err = decode("PUT", "/v2/refunds", None, b"").unwrap_err();
        assert!(matches!(err, CoreError::NotFound { kind: "route", .. }));
    }
}
