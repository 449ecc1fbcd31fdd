//! Request decoding without a server or a store: `(method, path, query, body bytes)` → the
//! domain command the endpoint's handler would hand to its service, or the 4xx it would answer
//! first. It calls the very functions the handlers call ([`parse_json_body`], the typed path id's
//! `Id::found`, each module's `parse_*`), so the fuzz targets
//! (`fuzz/fuzz_targets/request_decode.rs`) exercise the real parsing of every endpoint.
//!
//! What it leaves out: authentication, the rate limit, the 64 KiB and `Content-Type` rules and
//! idempotency (the pipeline's), and everything a service checks against stored state.

use serde_json::Value;
use tender_core::card::CardInput;
use tender_core::error::CoreError;
use tender_core::ids::{
    BalanceTransactionId, ConnectorId, CustomerId, DisputeId, EventId, InvoiceId, PaymentId,
    PaymentMethodId, PayoutId, PriceId, ProductId, RefundId, SubscriptionId, TestClockId,
    WebhookEndpointId,
};
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
    balance, billing, connectors, customers, disputes, events, payment_methods, payments, payouts,
    refunds, webhook_endpoints,
};

/// A list request: page and filters.
pub type ListRequest = (ListParams, Vec<(Field, String)>);

/// What a handler would hand to its service.
#[derive(Debug)]
pub enum Command {
    CreatePayment(CreatePayment),
    RetrievePayment(PaymentId),
    UpdatePayment(PaymentId, UpdatePayment),
    CapturePayment(PaymentId, Option<i64>),
    CancelPayment(PaymentId, Option<CancellationReason>),
    ListPayments(ListRequest),
    CreatePaymentMethod(CardInput, Vec<(String, String)>),
    RetrievePaymentMethod(PaymentMethodId),
    AttachPaymentMethod(PaymentMethodId, CustomerId),
    DetachPaymentMethod(PaymentMethodId),
    ListPaymentMethods(ListParams, String),
    CreateCustomer(CustomerFields),
    RetrieveCustomer(CustomerId),
    UpdateCustomer(CustomerId, CustomerFields),
    DeleteCustomer(CustomerId),
    ListCustomers(ListRequest),
    CreateRefund(CreateRefund),
    RetrieveRefund(RefundId),
    UpdateRefund(RefundId, Vec<(String, String)>),
    ListRefunds(ListRequest),
    RetrieveEvent(EventId),
    ListEventDeliveries(EventId),
    ResendEvent(EventId, String),
    ListEvents(ListRequest),
    /// The event to start after (`starting_after`; `Last-Event-ID` is a header).
    StreamEvents(Option<String>),
    CreateWebhookEndpoint(EndpointFields),
    RetrieveWebhookEndpoint(WebhookEndpointId),
    UpdateWebhookEndpoint(WebhookEndpointId, EndpointFields),
    DeleteWebhookEndpoint(WebhookEndpointId),
    RollWebhookSecret(WebhookEndpointId, Option<i64>),
    ListWebhookEndpoints(ListParams),
    CreateConnector(ConnectorFields),
    RetrieveConnector(ConnectorId),
    UpdateConnector(ConnectorId, ConnectorFields),
    DeleteConnector(ConnectorId),
    ListConnectors(ListParams),
    RetrieveBalance,
    ListBalanceTransactions(ListRequest),
    RetrieveBalanceTransaction(BalanceTransactionId),
    CreatePayout(tender_core::service::payouts::CreatePayout),
    RetrievePayout(PayoutId),
    CancelPayout(PayoutId),
    ListPayouts(ListRequest),
    RetrieveDispute(DisputeId),
    UpdateDispute(DisputeId, tender_core::service::disputes::UpdateDispute),
    CloseDispute(DisputeId),
    ListDisputes(ListRequest),
    CreateProduct(billing_cmd::CreateProduct),
    RetrieveProduct(ProductId),
    UpdateProduct(ProductId, billing_cmd::UpdateProduct),
    DeleteProduct(ProductId),
    ListProducts(ListRequest),
    CreatePrice(billing_cmd::CreatePrice),
    RetrievePrice(PriceId),
    UpdatePrice(PriceId, billing_cmd::UpdatePrice),
    ListPrices(ListRequest),
    CreateSubscription(billing_cmd::CreateSubscription),
    RetrieveSubscription(SubscriptionId),
    UpdateSubscription(SubscriptionId, billing_cmd::UpdateSubscription),
    CancelSubscription(SubscriptionId),
    ListSubscriptions(ListRequest),
    RetrieveInvoice(InvoiceId),
    PayInvoice(InvoiceId, Option<String>),
    VoidInvoice(InvoiceId),
    ListInvoices(ListRequest),
    CreateTestClock(i64, Option<String>),
    RetrieveTestClock(TestClockId),
    AdvanceTestClock(TestClockId, i64),
    DeleteTestClock(TestClockId),
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
    let update = matches!(m, "POST" | "PATCH");
    use Command as C;
    let cmd = match segments.as_slice() {
        ["payments"] if m == "POST" => C::CreatePayment(payments::parse_create(value)?),
        ["payments"] if m == "GET" => C::ListPayments(payments::parse_list(query)?),
        ["payments", raw] => {
            let pid = PaymentId::found(raw.to_string())?;
            match m {
                "GET" => C::RetrievePayment(pid),
                _ if update => C::UpdatePayment(pid, payments::parse_update(value)?),
                _ => return Err(no_route(path)),
            }
        }
        ["payments", raw, "capture"] if m == "POST" => C::CapturePayment(
            PaymentId::found(raw.to_string())?,
            payments::parse_capture(value)?,
        ),
        ["payments", raw, "cancel"] if m == "POST" => C::CancelPayment(
            PaymentId::found(raw.to_string())?,
            payments::parse_cancel(value)?,
        ),
        ["payment_methods"] if m == "POST" => {
            let (card, metadata) = payment_methods::parse_create(value)?;
            C::CreatePaymentMethod(card, metadata)
        }
        ["payment_methods"] if m == "GET" => {
            let (params, customer) = payment_methods::parse_list(query)?;
            C::ListPaymentMethods(params, customer)
        }
        ["payment_methods", raw] if m == "GET" => {
            C::RetrievePaymentMethod(PaymentMethodId::found(raw.to_string())?)
        }
        ["payment_methods", raw, "attach"] if m == "POST" => C::AttachPaymentMethod(
            PaymentMethodId::found(raw.to_string())?,
            payment_methods::parse_attach(value)?,
        ),
        ["payment_methods", raw, "detach"] if m == "POST" => {
            let pmid = PaymentMethodId::found(raw.to_string())?;
            payment_methods::parse_detach(value)?;
            C::DetachPaymentMethod(pmid)
        }
        ["customers"] if m == "POST" => C::CreateCustomer(customers::parse_create(value)?),
        ["customers"] if m == "GET" => C::ListCustomers(customers::parse_list(query)?),
        ["customers", raw] => {
            let cid = CustomerId::found(raw.to_string())?;
            match m {
                "GET" => C::RetrieveCustomer(cid),
                "DELETE" => {
                    customers::parse_delete(value)?;
                    C::DeleteCustomer(cid)
                }
                _ if update => C::UpdateCustomer(cid, customers::parse_fields(value)?),
                _ => return Err(no_route(path)),
            }
        }
        ["refunds"] if m == "POST" => C::CreateRefund(refunds::parse_create(value)?),
        ["refunds"] if m == "GET" => C::ListRefunds(refunds::parse_list(query)?),
        ["refunds", raw] => {
            let rid = RefundId::found(raw.to_string())?;
            match m {
                "GET" => C::RetrieveRefund(rid),
                _ if update => C::UpdateRefund(rid, refunds::parse_update(value)?),
                _ => return Err(no_route(path)),
            }
        }
        ["events"] if m == "GET" => C::ListEvents(events::parse_list(query)?),
        ["events", "stream"] if m == "GET" => C::StreamEvents(events::parse_stream(query)?),
        ["events", raw] if m == "GET" => C::RetrieveEvent(EventId::found(raw.to_string())?),
        ["events", raw, "deliveries"] if m == "GET" => {
            C::ListEventDeliveries(EventId::found(raw.to_string())?)
        }
        ["events", raw, "resend"] if m == "POST" => C::ResendEvent(
            EventId::found(raw.to_string())?,
            events::parse_resend(value)?,
        ),
        ["webhook_endpoints"] if m == "POST" => {
            C::CreateWebhookEndpoint(webhook_endpoints::parse_fields(value, false)?)
        }
        ["webhook_endpoints"] if m == "GET" => {
            C::ListWebhookEndpoints(webhook_endpoints::parse_list(query)?)
        }
        ["webhook_endpoints", raw] => {
            let wid = WebhookEndpointId::found(raw.to_string())?;
            match m {
                "GET" => C::RetrieveWebhookEndpoint(wid),
                "DELETE" => {
                    webhook_endpoints::parse_delete(value)?;
                    C::DeleteWebhookEndpoint(wid)
                }
                _ if update => {
                    C::UpdateWebhookEndpoint(wid, webhook_endpoints::parse_fields(value, true)?)
                }
                _ => return Err(no_route(path)),
            }
        }
        ["webhook_endpoints", raw, "roll_secret"] if m == "POST" => C::RollWebhookSecret(
            WebhookEndpointId::found(raw.to_string())?,
            webhook_endpoints::parse_roll_secret(value)?,
        ),
        ["connectors"] if m == "POST" => {
            C::CreateConnector(connectors::parse_fields(value, false)?)
        }
        ["connectors"] if m == "GET" => C::ListConnectors(connectors::parse_list(query)?),
        ["connectors", raw] => {
            let cid = ConnectorId::found(raw.to_string())?;
            match m {
                "GET" => C::RetrieveConnector(cid),
                "DELETE" => {
                    webhook_endpoints::parse_delete(value)?;
                    C::DeleteConnector(cid)
                }
                _ if update => C::UpdateConnector(cid, connectors::parse_fields(value, true)?),
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
            C::RetrieveBalanceTransaction(BalanceTransactionId::found(raw.to_string())?)
        }
        ["payouts"] if m == "POST" => C::CreatePayout(payouts::parse_create(value)?),
        ["payouts"] if m == "GET" => C::ListPayouts(payouts::parse_list(query)?),
        ["payouts", raw] if m == "GET" => C::RetrievePayout(PayoutId::found(raw.to_string())?),
        ["payouts", raw, "cancel"] if m == "POST" => {
            let pid = PayoutId::found(raw.to_string())?;
            payouts::parse_cancel(value)?;
            C::CancelPayout(pid)
        }
        ["disputes"] if m == "GET" => C::ListDisputes(disputes::parse_list(query)?),
        ["disputes", raw] if m == "GET" => C::RetrieveDispute(DisputeId::found(raw.to_string())?),
        ["disputes", raw] if m == "POST" => {
            let did = DisputeId::found(raw.to_string())?;
            C::UpdateDispute(did, disputes::parse_update(value)?)
        }
        ["disputes", raw, "close"] if m == "POST" => {
            let did = DisputeId::found(raw.to_string())?;
            disputes::parse_close(value)?;
            C::CloseDispute(did)
        }
        ["products"] if m == "POST" => C::CreateProduct(billing::parse_create_product(value)?),
        ["products"] if m == "GET" => C::ListProducts(billing::parse_list_products(query)?),
        ["products", raw] => {
            let pid = ProductId::found(raw.to_string())?;
            match m {
                "GET" => C::RetrieveProduct(pid),
                "DELETE" => {
                    billing::parse_empty(value)?;
                    C::DeleteProduct(pid)
                }
                _ if update => C::UpdateProduct(pid, billing::parse_update_product(value)?),
                _ => return Err(no_route(path)),
            }
        }
        ["prices"] if m == "POST" => C::CreatePrice(billing::parse_create_price(value)?),
        ["prices"] if m == "GET" => C::ListPrices(billing::parse_list_prices(query)?),
        ["prices", raw] => {
            let pid = PriceId::found(raw.to_string())?;
            match m {
                "GET" => C::RetrievePrice(pid),
                _ if update => C::UpdatePrice(pid, billing::parse_update_price(value)?),
                _ => return Err(no_route(path)),
            }
        }
        ["subscriptions"] if m == "POST" => {
            C::CreateSubscription(billing::parse_create_subscription(value)?)
        }
        ["subscriptions"] if m == "GET" => {
            C::ListSubscriptions(billing::parse_list_subscriptions(query)?)
        }
        ["subscriptions", raw] => {
            let sid = SubscriptionId::found(raw.to_string())?;
            match m {
                "GET" => C::RetrieveSubscription(sid),
                "DELETE" => {
                    billing::parse_empty(value)?;
                    C::CancelSubscription(sid)
                }
                _ if update => {
                    C::UpdateSubscription(sid, billing::parse_update_subscription(value)?)
                }
                _ => return Err(no_route(path)),
            }
        }
        ["invoices"] if m == "GET" => C::ListInvoices(billing::parse_list_invoices(query)?),
        ["invoices", raw] if m == "GET" => C::RetrieveInvoice(InvoiceId::found(raw.to_string())?),
        ["invoices", raw, "pay"] if m == "POST" => {
            let iid = InvoiceId::found(raw.to_string())?;
            C::PayInvoice(iid, billing::parse_pay_invoice(value)?)
        }
        ["invoices", raw, "void"] if m == "POST" => {
            let iid = InvoiceId::found(raw.to_string())?;
            billing::parse_empty(value)?;
            C::VoidInvoice(iid)
        }
        ["test_helpers", "test_clocks"] if m == "POST" => {
            let (frozen, name) = billing::parse_create_clock(value)?;
            C::CreateTestClock(frozen, name)
        }
        ["test_helpers", "test_clocks"] if m == "GET" => {
            C::ListTestClocks(billing::parse_list_clocks(query)?)
        }
        ["test_helpers", "test_clocks", raw] => {
            let cid = TestClockId::found(raw.to_string())?;
            match m {
                "GET" => C::RetrieveTestClock(cid),
                "DELETE" => {
                    billing::parse_empty(value)?;
                    C::DeleteTestClock(cid)
                }
                _ => return Err(no_route(path)),
            }
        }
        ["test_helpers", "test_clocks", raw, "advance"] if m == "POST" => {
            let cid = TestClockId::found(raw.to_string())?;
            C::AdvanceTestClock(cid, billing::parse_advance_clock(value)?)
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
    use serde_json::json;
    use tender_core::ids::IdKind;
    use tender_core::service::payments::PaymentMethodInput;

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
        match create(&cus, &pm).unwrap() {
            Command::CreatePayment(c) => {
                assert_eq!(c.customer.unwrap(), cus);
                assert!(matches!(c.payment_method, PaymentMethodInput::Saved(id) if id == pm));
            }
            other => panic!("{other:?}"),
        }
        let missing = |r: Result<Command, CoreError>, name: &str, id: &str| match r.unwrap_err() {
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
}
