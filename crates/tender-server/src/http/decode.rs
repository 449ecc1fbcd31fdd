//! Request decoding without a server or a store: `(method, path, query, body bytes)` → the
//! domain command the endpoint's handler would hand to its service, or the 4xx it would answer
//! first. It calls the very functions the handlers call ([`parse_json_body`], the typed path id's
//! `Id::found`, each module's `parse_*`), so the fuzz targets
//! (`fuzz/fuzz_targets/request_decode.rs`) exercise the real parsing of every endpoint. Which
//! operation a request names comes from the route table ([`super::routes::resolve`]), as the
//! router's does; this file only says what each operation parses.
//!
//! What it leaves out: authentication, the rate limit, the 64 KiB and `Content-Type` rules and
//! idempotency (the pipeline's), and everything a service checks against stored state.

use serde_json::Value;
use tender_core::card::CardInput;
use tender_core::connectors::service::ConnectorFields;
use tender_core::customers::service::CustomerFields;
use tender_core::error::CoreError;
use tender_core::ids::{
    BalanceTransactionId, ConnectorId, CustomerId, DisputeId, EventId, InvoiceId, PaymentId,
    PaymentMethodId, PayoutId, PriceId, ProductId, RefundId, SubscriptionId, TestClockId,
    WebhookEndpointId,
};
use tender_core::payments::create::CreatePayment;
use tender_core::payments::lifecycle::UpdatePayment;
use tender_core::payments::payment::CancellationReason;
use tender_core::refunds::service::CreateRefund;
use tender_core::services::ListParams;
use tender_core::store::Field;
use tender_core::webhooks::service::EndpointFields;

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
    CreatePayout(tender_core::balance::payouts::CreatePayout),
    RetrievePayout(PayoutId),
    CancelPayout(PayoutId),
    ListPayouts(ListRequest),
    RetrieveDispute(DisputeId),
    UpdateDispute(DisputeId, tender_core::balance::disputes::UpdateDispute),
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
    pub use tender_core::billing::catalog::{
        CreatePrice, CreateProduct, UpdatePrice, UpdateProduct,
    };
    pub use tender_core::billing::subscriptions::{CreateSubscription, UpdateSubscription};
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
    // The route table says which operation this is; the match below only says what each
    // operation's handler parses. An operation of the table missing here is caught by
    // `every_route_decodes_or_names_a_parameter`.
    let (route, path_id) = super::routes::resolve(m, path).ok_or_else(|| no_route(path))?;
    // The `{id}` segment (every route that reads it has one: `resolve` matched it non-empty).
    let raw = || path_id.unwrap_or_default().to_string();
    use Command as C;
    let cmd = match (m, route.path) {
        ("POST", "/payments") => C::CreatePayment(payments::parse_create(value)?),
        ("GET", "/payments") => C::ListPayments(payments::parse_list(query)?),
        ("GET", "/payments/{id}") => C::RetrievePayment(PaymentId::found(raw())?),
        ("POST" | "PATCH", "/payments/{id}") => {
            C::UpdatePayment(PaymentId::found(raw())?, payments::parse_update(value)?)
        }
        ("POST", "/payments/{id}/capture") => {
            C::CapturePayment(PaymentId::found(raw())?, payments::parse_capture(value)?)
        }
        ("POST", "/payments/{id}/cancel") => {
            C::CancelPayment(PaymentId::found(raw())?, payments::parse_cancel(value)?)
        }
        ("POST", "/payment_methods") => {
            let (card, metadata) = payment_methods::parse_create(value)?;
            C::CreatePaymentMethod(card, metadata)
        }
        ("GET", "/payment_methods") => {
            let (params, customer) = payment_methods::parse_list(query)?;
            C::ListPaymentMethods(params, customer)
        }
        ("GET", "/payment_methods/{id}") => {
            C::RetrievePaymentMethod(PaymentMethodId::found(raw())?)
        }
        ("POST", "/payment_methods/{id}/attach") => C::AttachPaymentMethod(
            PaymentMethodId::found(raw())?,
            payment_methods::parse_attach(value)?,
        ),
        ("POST", "/payment_methods/{id}/detach") => {
            let pmid = PaymentMethodId::found(raw())?;
            payment_methods::parse_detach(value)?;
            C::DetachPaymentMethod(pmid)
        }
        ("POST", "/customers") => C::CreateCustomer(customers::parse_create(value)?),
        ("GET", "/customers") => C::ListCustomers(customers::parse_list(query)?),
        ("GET", "/customers/{id}") => C::RetrieveCustomer(CustomerId::found(raw())?),
        ("DELETE", "/customers/{id}") => {
            let cid = CustomerId::found(raw())?;
            customers::parse_delete(value)?;
            C::DeleteCustomer(cid)
        }
        ("POST" | "PATCH", "/customers/{id}") => {
            C::UpdateCustomer(CustomerId::found(raw())?, customers::parse_fields(value)?)
        }
        ("POST", "/refunds") => C::CreateRefund(refunds::parse_create(value)?),
        ("GET", "/refunds") => C::ListRefunds(refunds::parse_list(query)?),
        ("GET", "/refunds/{id}") => C::RetrieveRefund(RefundId::found(raw())?),
        ("POST" | "PATCH", "/refunds/{id}") => {
            C::UpdateRefund(RefundId::found(raw())?, refunds::parse_update(value)?)
        }
        ("GET", "/events") => C::ListEvents(events::parse_list(query)?),
        ("GET", "/events/stream") => C::StreamEvents(events::parse_stream(query)?),
        ("GET", "/events/{id}") => C::RetrieveEvent(EventId::found(raw())?),
        ("GET", "/events/{id}/deliveries") => C::ListEventDeliveries(EventId::found(raw())?),
        ("POST", "/events/{id}/resend") => {
            C::ResendEvent(EventId::found(raw())?, events::parse_resend(value)?)
        }
        ("POST", "/webhook_endpoints") => {
            C::CreateWebhookEndpoint(webhook_endpoints::parse_fields(value, false)?)
        }
        ("GET", "/webhook_endpoints") => {
            C::ListWebhookEndpoints(webhook_endpoints::parse_list(query)?)
        }
        ("GET", "/webhook_endpoints/{id}") => {
            C::RetrieveWebhookEndpoint(WebhookEndpointId::found(raw())?)
        }
        ("DELETE", "/webhook_endpoints/{id}") => {
            let wid = WebhookEndpointId::found(raw())?;
            webhook_endpoints::parse_delete(value)?;
            C::DeleteWebhookEndpoint(wid)
        }
        ("POST" | "PATCH", "/webhook_endpoints/{id}") => C::UpdateWebhookEndpoint(
            WebhookEndpointId::found(raw())?,
            webhook_endpoints::parse_fields(value, true)?,
        ),
        ("POST", "/webhook_endpoints/{id}/roll_secret") => C::RollWebhookSecret(
            WebhookEndpointId::found(raw())?,
            webhook_endpoints::parse_roll_secret(value)?,
        ),
        ("POST", "/connectors") => C::CreateConnector(connectors::parse_fields(value, false)?),
        ("GET", "/connectors") => C::ListConnectors(connectors::parse_list(query)?),
        ("GET", "/connectors/{id}") => C::RetrieveConnector(ConnectorId::found(raw())?),
        ("DELETE", "/connectors/{id}") => {
            let cid = ConnectorId::found(raw())?;
            webhook_endpoints::parse_delete(value)?;
            C::DeleteConnector(cid)
        }
        ("POST" | "PATCH", "/connectors/{id}") => C::UpdateConnector(
            ConnectorId::found(raw())?,
            connectors::parse_fields(value, true)?,
        ),
        ("GET", "/balance") => {
            balance::parse_retrieve(query)?;
            C::RetrieveBalance
        }
        ("GET", "/balance_transactions") => C::ListBalanceTransactions(balance::parse_list(query)?),
        ("GET", "/balance_transactions/{id}") => {
            C::RetrieveBalanceTransaction(BalanceTransactionId::found(raw())?)
        }
        ("POST", "/payouts") => C::CreatePayout(payouts::parse_create(value)?),
        ("GET", "/payouts") => C::ListPayouts(payouts::parse_list(query)?),
        ("GET", "/payouts/{id}") => C::RetrievePayout(PayoutId::found(raw())?),
        ("POST", "/payouts/{id}/cancel") => {
            let pid = PayoutId::found(raw())?;
            payouts::parse_cancel(value)?;
            C::CancelPayout(pid)
        }
        ("GET", "/disputes") => C::ListDisputes(disputes::parse_list(query)?),
        ("GET", "/disputes/{id}") => C::RetrieveDispute(DisputeId::found(raw())?),
        ("POST", "/disputes/{id}") => {
            C::UpdateDispute(DisputeId::found(raw())?, disputes::parse_update(value)?)
        }
        ("POST", "/disputes/{id}/close") => {
            let did = DisputeId::found(raw())?;
            disputes::parse_close(value)?;
            C::CloseDispute(did)
        }
        ("POST", "/products") => C::CreateProduct(billing::parse_create_product(value)?),
        ("GET", "/products") => C::ListProducts(billing::parse_list_products(query)?),
        ("GET", "/products/{id}") => C::RetrieveProduct(ProductId::found(raw())?),
        ("DELETE", "/products/{id}") => {
            let pid = ProductId::found(raw())?;
            billing::parse_empty(value)?;
            C::DeleteProduct(pid)
        }
        ("POST" | "PATCH", "/products/{id}") => C::UpdateProduct(
            ProductId::found(raw())?,
            billing::parse_update_product(value)?,
        ),
        ("POST", "/prices") => C::CreatePrice(billing::parse_create_price(value)?),
        ("GET", "/prices") => C::ListPrices(billing::parse_list_prices(query)?),
        ("GET", "/prices/{id}") => C::RetrievePrice(PriceId::found(raw())?),
        ("POST" | "PATCH", "/prices/{id}") => {
            C::UpdatePrice(PriceId::found(raw())?, billing::parse_update_price(value)?)
        }
        ("POST", "/subscriptions") => {
            C::CreateSubscription(billing::parse_create_subscription(value)?)
        }
        ("GET", "/subscriptions") => {
            C::ListSubscriptions(billing::parse_list_subscriptions(query)?)
        }
        ("GET", "/subscriptions/{id}") => C::RetrieveSubscription(SubscriptionId::found(raw())?),
        ("DELETE", "/subscriptions/{id}") => {
            let sid = SubscriptionId::found(raw())?;
            billing::parse_empty(value)?;
            C::CancelSubscription(sid)
        }
        ("POST" | "PATCH", "/subscriptions/{id}") => C::UpdateSubscription(
            SubscriptionId::found(raw())?,
            billing::parse_update_subscription(value)?,
        ),
        ("GET", "/invoices") => C::ListInvoices(billing::parse_list_invoices(query)?),
        ("GET", "/invoices/{id}") => C::RetrieveInvoice(InvoiceId::found(raw())?),
        ("POST", "/invoices/{id}/pay") => {
            let iid = InvoiceId::found(raw())?;
            C::PayInvoice(iid, billing::parse_pay_invoice(value)?)
        }
        ("POST", "/invoices/{id}/void") => {
            let iid = InvoiceId::found(raw())?;
            billing::parse_empty(value)?;
            C::VoidInvoice(iid)
        }
        ("POST", "/test_helpers/test_clocks") => {
            let (frozen, name) = billing::parse_create_clock(value)?;
            C::CreateTestClock(frozen, name)
        }
        ("GET", "/test_helpers/test_clocks") => {
            C::ListTestClocks(billing::parse_list_clocks(query)?)
        }
        ("GET", "/test_helpers/test_clocks/{id}") => {
            C::RetrieveTestClock(TestClockId::found(raw())?)
        }
        ("DELETE", "/test_helpers/test_clocks/{id}") => {
            let cid = TestClockId::found(raw())?;
            billing::parse_empty(value)?;
            C::DeleteTestClock(cid)
        }
        ("POST", "/test_helpers/test_clocks/{id}/advance") => {
            let cid = TestClockId::found(raw())?;
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
    use tender_core::payments::create::PaymentMethodInput;

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
