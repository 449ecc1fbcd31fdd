//! The client against the real server (in-process, port 0, fresh SQLite), and against small
//! local stubs that misbehave on purpose to exercise retries.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use futures::TryStreamExt;
use tender_client::webhook::{self, WebhookError};
use tender_client::*;
use tender_core::clock::OffsetClock;
use tender_server::{Application, ServerConfig};

/// A running server and its test secret key.
struct Server {
    base: String,
    sk: String,
    pk: String,
    _data_dir: tempfile::TempDir,
}

async fn spawn_server() -> Server {
    let data_dir = tempfile::tempdir().expect("tempdir");
    let mut config = ServerConfig::new(data_dir.path().to_path_buf());
    config.listen = "127.0.0.1:0".parse().unwrap();
    config.receipt_listen = "127.0.0.1:0".parse().unwrap();
    config.rate_limit = 0;
    config.webhook_retry_scale = 0.001;
    let app = Application::build_with_clock(config, Arc::new(OffsetClock::new()))
        .await
        .expect("build");
    let base = format!("http://{}/v2", app.api_addr());
    let account = app.bootstrap.clone().expect("a fresh store bootstraps");
    tokio::spawn(app.run_until(std::future::pending()));
    Server {
        base,
        sk: account.keys.test.secret,
        pk: account.keys.test.publishable,
        _data_dir: data_dir,
    }
}

/// Fast retries so the tests do not wait on backoff.
fn fast_retries() -> RetryPolicy {
    RetryPolicy {
        max_retries: 3,
        initial_backoff: Duration::from_millis(10),
        max_backoff: Duration::from_millis(40),
        max_retry_after: Duration::from_secs(5),
    }
}

fn client(server: &Server) -> Client {
    Client::builder(&server.base, &server.sk)
        .retry_policy(fast_retries())
        .build()
}

fn card(number: &str) -> CardParams {
    let cvc = if number.starts_with("37") {
        "1234"
    } else {
        "123"
    };
    CardParams::new(number, 12, 2034, cvc)
}

fn api_error(result: Result<impl std::fmt::Debug, Error>) -> ApiError {
    match result {
        Err(Error::Api(e)) => *e,
        other => panic!("expected an API error, got {other:?}"),
    }
}

#[tokio::test]
async fn payment_is_created_retrieved_and_listed() {
    let server = spawn_server().await;
    let client = client(&server);
    let created = client
        .payments()
        .create(
            &CreatePayment::new(2000, "USD", card("4242424242424242"))
                .description("Order 1")
                .metadata("order", "1"),
        )
        .await
        .unwrap();
    assert!(created.id.starts_with("pay_"));
    assert_eq!(created.status, PaymentStatus::Succeeded);
    assert_eq!(created.currency, "usd");
    assert_eq!(created.amount_captured, 2000);
    assert_eq!(created.capture_method, CaptureMethod::Automatic);
    let shown = created
        .payment_method
        .as_ref()
        .unwrap()
        .card
        .as_ref()
        .unwrap();
    assert_eq!(
        (shown.brand, shown.last4.as_str()),
        (CardBrand::Visa, "4242")
    );
    assert_eq!(created.metadata.get("order").map(String::as_str), Some("1"));
    assert!(created.receipt_url.ends_with(&created.id));

    let fetched = client.payments().retrieve(&created.id).await.unwrap();
    assert_eq!(fetched, created);

    let page = client
        .payments()
        .list(&ListPayments {
            status: Some(PaymentStatus::Succeeded),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(page.url, "/v2/payments");
    assert!(!page.has_more);
    assert_eq!(
        page.data.iter().map(|p| &p.id).collect::<Vec<_>>(),
        [&created.id]
    );
}

#[tokio::test]
async fn decline_is_a_typed_card_error_with_decline_code_and_payment() {
    let server = spawn_server().await;
    let client = client(&server);
    let err = api_error(
        client
            .payments()
            .create(&CreatePayment::new(2000, "usd", card("4000000000009995")))
            .await,
    );
    assert_eq!(err.status, 402);
    assert_eq!(err.kind, ErrorType::CardError);
    assert!(err.is_card_error());
    assert_eq!(err.code, "card_declined");
    assert_eq!(err.decline_code.as_deref(), Some("insufficient_funds"));
    assert!(err.request_id.as_deref().unwrap().starts_with("req_"));
    let failed = client
        .payments()
        .retrieve(err.payment.as_deref().expect("the failed payment's id"))
        .await
        .unwrap();
    assert_eq!(failed.status, PaymentStatus::Failed);
    assert_eq!(failed.decline_code.as_deref(), Some("insufficient_funds"));

    // Validation errors before any money moves: a card_error naming the field, no payment.
    let err = api_error(
        client
            .payments()
            .create(&CreatePayment::new(
                2000,
                "usd",
                CardParams::new("4242424242424241", 12, 2034, "123"),
            ))
            .await,
    );
    assert_eq!(err.code, "incorrect_number");
    assert_eq!(err.param.as_deref(), Some("payment_method[card][number]"));
    assert_eq!(err.payment, None);
}

#[tokio::test]
async fn invalid_requests_are_typed_invalid_request_errors() {
    let server = spawn_server().await;
    let client = client(&server);
    let err = api_error(
        client
            .payments()
            .create(&CreatePayment::new(10, "usd", card("4242424242424242")))
            .await,
    );
    assert_eq!(
        (
            err.status,
            err.kind,
            err.code.as_str(),
            err.param.as_deref()
        ),
        (
            400,
            ErrorType::InvalidRequestError,
            "amount_too_small",
            Some("amount")
        )
    );
    let err = api_error(client.customers().retrieve("cus_doesnotexist").await);
    assert_eq!((err.status, err.code.as_str()), (404, "resource_missing"));
    let bad_key = Client::builder(&server.base, "sk_test_nope")
        .retry_policy(fast_retries())
        .build();
    let err = api_error(bad_key.customers().list(&Default::default()).await);
    assert_eq!(
        (err.status, err.kind, err.code.as_str()),
        (401, ErrorType::AuthenticationError, "api_key_invalid")
    );
}

#[tokio::test]
async fn list_stream_walks_25_customers_newest_first() {
    let server = spawn_server().await;
    let client = client(&server);
    let mut created = Vec::new();
    for i in 0..25 {
        let c = client
            .customers()
            .create(&CreateCustomer {
                email: Some(format!("c{i}@example.com")),
                ..Default::default()
            })
            .await
            .unwrap();
        created.push(c.id);
    }
    created.reverse();
    let streamed: Vec<String> = client
        .customers()
        .list_stream(ListCustomers {
            limit: Some(10),
            ..Default::default()
        })
        .map_ok(|c| c.id)
        .try_collect()
        .await
        .unwrap();
    assert_eq!(streamed, created);

    // From a cursor: everything older than the fifth newest.
    let rest: Vec<String> = client
        .customers()
        .list_stream(ListCustomers {
            limit: Some(7),
            starting_after: Some(created[4].clone()),
            ..Default::default()
        })
        .map_ok(|c| c.id)
        .try_collect()
        .await
        .unwrap();
    assert_eq!(rest, created[5..]);

    // A filter applies to every page.
    let one: Vec<Customer> = client
        .customers()
        .list_stream(ListCustomers {
            email: Some("c3@example.com".into()),
            limit: Some(1),
            ..Default::default()
        })
        .try_collect()
        .await
        .unwrap();
    assert_eq!(one.len(), 1);
    assert_eq!(one[0].email.as_deref(), Some("c3@example.com"));
}

#[tokio::test]
async fn every_resource_round_trips_through_the_typed_api() {
    let server = spawn_server().await;
    let client = client(&server);

    // Customers: create, update (address merges), retrieve.
    let customer = client
        .customers()
        .create(&CreateCustomer {
            email: Some("ada@example.com".into()),
            name: Some("Ada".into()),
            address: Some(Address {
                city: Some("London".into()),
                country: Some("gb".into()),
                ..Default::default()
            }),
            ..Default::default()
        })
        .await
        .unwrap();
    let updated = client
        .customers()
        .update(
            &customer.id,
            &UpdateCustomer {
                address: Some(Address {
                    line1: Some("12 Downing St".into()),
                    ..Default::default()
                }),
                metadata: Some([("tier".to_string(), "gold".to_string())].into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let address = updated.address.clone().unwrap();
    assert_eq!(address.city.as_deref(), Some("London"));
    assert_eq!(address.country.as_deref(), Some("GB"));
    assert_eq!(address.line1.as_deref(), Some("12 Downing St"));
    assert_eq!(
        client.customers().retrieve(&customer.id).await.unwrap(),
        updated
    );

    // Payment methods: tokenise with the publishable key, attach, list, pay, detach.
    let public = Client::new(&server.base, &server.pk);
    let pm = public
        .payment_methods()
        .create(&CreatePaymentMethod::card(card("5555555555554444")))
        .await
        .unwrap();
    assert_eq!(pm.card.brand, CardBrand::Mastercard);
    assert_eq!(pm.customer, None);
    let err = api_error(public.customers().list(&Default::default()).await);
    assert_eq!((err.status, err.kind), (403, ErrorType::PermissionError));
    let attached = client
        .payment_methods()
        .attach(
            &pm.id,
            &AttachPaymentMethod {
                customer: customer.id.clone(),
            },
        )
        .await
        .unwrap();
    assert_eq!(attached.customer.as_deref(), Some(customer.id.as_str()));
    let saved = client
        .payment_methods()
        .list(&ListPaymentMethods::for_customer(&customer.id))
        .await
        .unwrap();
    assert_eq!(saved.data, std::slice::from_ref(&attached));

    // A manual-capture payment with the saved card: capture part, refund part.
    let authorised = client
        .payments()
        .create(
            &CreatePayment::new(5000, "eur", PaymentMethodParam::id(&pm.id))
                .customer(&customer.id)
                .capture(false),
        )
        .await
        .unwrap();
    assert_eq!(authorised.status, PaymentStatus::RequiresCapture);
    assert_eq!(authorised.capture_method, CaptureMethod::Manual);
    let captured = client
        .payments()
        .capture(&authorised.id, &CapturePayment { amount: Some(4000) })
        .await
        .unwrap();
    assert_eq!(
        (captured.status, captured.amount, captured.amount_captured),
        (PaymentStatus::Succeeded, 5000, 4000)
    );
    let refund = client
        .refunds()
        .create(
            &CreateRefund::new(&captured.id)
                .amount(1500)
                .reason(RefundReason::RequestedByCustomer),
        )
        .await
        .unwrap();
    assert_eq!(
        (refund.status, refund.amount, refund.currency.as_str()),
        (RefundStatus::Succeeded, 1500, "eur")
    );
    let refund = client
        .refunds()
        .update(
            &refund.id,
            &UpdateRefund {
                metadata: [("ticket".to_string(), "42".to_string())].into(),
            },
        )
        .await
        .unwrap();
    assert_eq!(client.refunds().retrieve(&refund.id).await.unwrap(), refund);
    let refunds = client
        .refunds()
        .list(&ListRefunds {
            payment: Some(captured.id.clone()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(refunds.data, [refund]);
    let after = client.payments().retrieve(&captured.id).await.unwrap();
    assert_eq!((after.amount_refunded, after.refunded), (1500, false));

    // Update and cancel.
    let pending = client
        .payments()
        .create(&CreatePayment::new(900, "gbp", card("378282246310005")).capture(false))
        .await
        .unwrap();
    let pending = client
        .payments()
        .update(
            &pending.id,
            &UpdatePayment {
                description: Some("table 4".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(pending.description.as_deref(), Some("table 4"));
    let canceled = client
        .payments()
        .cancel(
            &pending.id,
            &CancelPayment {
                cancellation_reason: Some(CancellationReason::RequestedByCustomer),
            },
        )
        .await
        .unwrap();
    assert_eq!(canceled.status, PaymentStatus::Canceled);
    assert_eq!(
        canceled.cancellation_reason,
        Some(CancellationReason::RequestedByCustomer)
    );
    assert!(canceled.canceled_at.is_some());
    let err = api_error(
        client
            .payments()
            .capture(&canceled.id, &Default::default())
            .await,
    );
    assert_eq!(err.code, "payment_unexpected_state");

    // Bank transfer: processing, IBAN never shown.
    let transfer = client
        .payments()
        .create(&CreatePayment::new(
            1000,
            "eur",
            PaymentMethodParam::bank_transfer("DE89370400440532013000", "Ada Lovelace"),
        ))
        .await
        .unwrap();
    assert_eq!(transfer.status, PaymentStatus::Processing);
    let bank = transfer.payment_method.unwrap().bank_transfer.unwrap();
    assert_eq!((bank.last4.as_str(), bank.country.as_str()), ("3000", "DE"));

    // 3-D Secure: requires_action with a redirect.
    let secure = client
        .payments()
        .create(
            &CreatePayment::new(1000, "usd", card("4000002500003155"))
                .return_url("https://shop.example/done"),
        )
        .await
        .unwrap();
    assert_eq!(secure.status, PaymentStatus::RequiresAction);
    let redirect = secure.next_action.unwrap().redirect_to_url.unwrap();
    assert!(redirect.url.contains("/authenticate/"));
    assert_eq!(
        redirect.return_url.as_deref(),
        Some("https://shop.example/done")
    );

    // Detach forgets the card; deleting the customer answers Deleted.
    let detached = client.payment_methods().detach(&pm.id).await.unwrap();
    assert_eq!(detached.customer, None);
    let deleted = client.customers().delete(&customer.id).await.unwrap();
    assert!(deleted.deleted);
    assert_eq!(deleted.id, customer.id);

    // Events: typed objects and previous attributes.
    let events = client
        .events()
        .list(&ListEvents {
            kind: Some(events::types::CUSTOMER_UPDATED.into()),
            ..Default::default()
        })
        .await
        .unwrap();
    let event = &events.data[0];
    assert_eq!(event.api_version, "2.1");
    assert!(event.request.id.as_deref().unwrap().starts_with("req_"));
    assert_eq!(event.customer().unwrap().id, customer.id);
    assert!(event.data.previous_attributes.is_some());
    assert_eq!(&client.events().retrieve(&event.id).await.unwrap(), event);
    let all: Vec<Event> = client
        .events()
        .list_stream(Default::default())
        .try_collect()
        .await
        .unwrap();
    assert!(all
        .iter()
        .any(|e| e.kind == events::types::REFUND_CREATED && e.refund().is_some()));
    assert!(all.iter().any(
        |e| e.kind == events::types::PAYMENT_CANCELED && e.payment().unwrap().id == canceled.id
    ));
}

/// A webhook receiver: every delivery's headers and raw body.
#[derive(Clone, Default)]
struct Received(Arc<Mutex<Vec<(HeaderMap, Bytes)>>>);

async fn spawn_receiver() -> (String, Received) {
    let received = Received::default();
    let app = axum::Router::new()
        .fallback(
            |State(r): State<Received>, headers: HeaderMap, body: Bytes| async move {
                r.0.lock().unwrap().push((headers, body));
                StatusCode::OK
            },
        )
        .with_state(received.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}/hook"), received)
}

#[tokio::test]
async fn webhook_verify_accepts_a_real_delivery_and_rejects_tampering_and_old_timestamps() {
    let server = spawn_server().await;
    let client = client(&server);
    let (url, received) = spawn_receiver().await;
    let endpoint = client
        .webhook_endpoints()
        .create(&CreateWebhookEndpoint {
            url: url.clone(),
            enabled_events: vec![events::types::CUSTOMER_CREATED.into()],
            description: Some("test receiver".into()),
        })
        .await
        .unwrap();
    let secret = endpoint.secret.clone().expect("the secret, once");
    assert!(secret.starts_with("whsec_"));
    assert_eq!(endpoint.status, EndpointStatus::Enabled);
    let customer = client
        .customers()
        .create(&CreateCustomer::default())
        .await
        .unwrap();

    let deadline = Instant::now() + Duration::from_secs(10);
    let (headers, body) = loop {
        if let Some(d) = received.0.lock().unwrap().first().cloned() {
            break d;
        }
        assert!(Instant::now() < deadline, "no delivery within 10 s");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let header = headers
        .get(webhook::SIGNATURE_HEADER)
        .unwrap()
        .to_str()
        .unwrap();
    let event = webhook::verify(header, &body, &secret, webhook::DEFAULT_TOLERANCE).unwrap();
    assert_eq!(event.kind, "customer.created");
    assert_eq!(event.customer().unwrap().id, customer.id);

    let standard = |name: &str| headers.get(name).unwrap().to_str().unwrap();
    let same = webhook::verify_standard(
        standard("webhook-id"),
        standard("webhook-timestamp"),
        standard("webhook-signature"),
        &body,
        &secret,
        webhook::DEFAULT_TOLERANCE,
    )
    .unwrap();
    assert_eq!(same, event);

    let mut tampered = body.to_vec();
    let at = tampered.len() / 2;
    tampered[at] ^= 1;
    assert!(matches!(
        webhook::verify(header, &tampered, &secret, webhook::DEFAULT_TOLERANCE),
        Err(WebhookError::NoMatch)
    ));
    let t: i64 = header
        .split(',')
        .find_map(|p| p.strip_prefix("t="))
        .unwrap()
        .parse()
        .unwrap();
    assert!(matches!(
        webhook::verify_at(header, &body, &secret, Duration::from_secs(300), t + 301),
        Err(WebhookError::TimestampOutOfTolerance)
    ));
    assert!(matches!(
        webhook::verify(header, &body, "whsec_d3Jvbmc=", webhook::DEFAULT_TOLERANCE),
        Err(WebhookError::NoMatch)
    ));

    // The attempt is visible; endpoints update, list, roll and delete.
    let deliveries = client.events().deliveries(&event.id).await.unwrap();
    assert_eq!(deliveries.len(), 1);
    assert_eq!(deliveries[0].webhook_endpoint, endpoint.id);
    let resent = client
        .events()
        .resend(
            &event.id,
            &ResendEvent {
                webhook_endpoint: endpoint.id.clone(),
            },
        )
        .await
        .unwrap();
    assert_eq!(resent.status, DeliveryStatus::Pending);
    let rolled = client
        .webhook_endpoints()
        .roll_secret(
            &endpoint.id,
            &RollSecret {
                expires_in: Some(0),
            },
        )
        .await
        .unwrap();
    assert_ne!(rolled.secret, endpoint.secret);
    let disabled = client
        .webhook_endpoints()
        .update(
            &endpoint.id,
            &UpdateWebhookEndpoint {
                disabled: Some(true),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(disabled.status, EndpointStatus::Disabled);
    assert_eq!(disabled.secret, None);
    let listed = client
        .webhook_endpoints()
        .list(&Default::default())
        .await
        .unwrap();
    assert_eq!(listed.data, [disabled]);
    assert!(
        client
            .webhook_endpoints()
            .delete(&endpoint.id)
            .await
            .unwrap()
            .deleted
    );
}

// ---- Retries, against a stub that fails on purpose and otherwise forwards to the server ----

/// What the stub does with the n-th request.
#[derive(Clone, Copy, Debug)]
enum Act {
    /// Pass it to the real server and return its answer.
    Forward,
    /// Pass it to the real server, then pretend the answer was a 503 (a lost response).
    ForwardThen503,
    /// 503 without asking the server.
    Unavailable,
    /// 429 with `Retry-After: n`.
    TooMany(u64),
    /// 409 idempotency_error: the same key is in flight.
    InFlight,
    /// 400 invalid_request_error.
    BadRequest,
}

/// A request the stub saw: its `Idempotency-Key` and when it arrived.
type Seen = (Option<String>, Instant);

#[derive(Clone)]
struct Stub {
    upstream: String,
    script: Arc<Vec<Act>>,
    /// Each request's `Idempotency-Key` (or `None`) and when it arrived.
    seen: Arc<Mutex<Vec<Seen>>>,
    http: reqwest::Client,
}

impl Stub {
    fn keys(&self) -> Vec<Option<String>> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .map(|(k, _)| k.clone())
            .collect()
    }
}

fn error_json(status: StatusCode, kind: &str, code: &str) -> Response {
    let body = serde_json::json!({"error": {
        "type": kind, "code": code, "message": "stub", "request_id": "req_stub"
    }});
    (
        status,
        [("content-type", "application/json")],
        body.to_string(),
    )
        .into_response()
}

async fn stub_handler(
    State(stub): State<Stub>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let n = {
        let mut seen = stub.seen.lock().unwrap();
        let key = headers
            .get("idempotency-key")
            .map(|v| v.to_str().unwrap().to_string());
        seen.push((key, Instant::now()));
        seen.len() - 1
    };
    let act = stub.script.get(n).copied().unwrap_or(Act::Forward);
    let forward = || async {
        let url = format!("{}{}", stub.upstream, uri);
        let mut req = stub.http.request(
            reqwest::Method::from_bytes(method.as_str().as_bytes()).unwrap(),
            url,
        );
        for name in [
            "authorization",
            "idempotency-key",
            "content-type",
            "tender-version",
        ] {
            if let Some(v) = headers.get(name) {
                req = req.header(name, v.to_str().unwrap());
            }
        }
        let resp = req.body(body.clone()).send().await.unwrap();
        let status = resp.status().as_u16();
        let replayed = resp.headers().get("idempotent-replayed").is_some();
        let bytes = resp.bytes().await.unwrap();
        let mut out = (
            StatusCode::from_u16(status).unwrap(),
            [("content-type", "application/json")],
            bytes,
        )
            .into_response();
        if replayed {
            out.headers_mut()
                .insert("idempotent-replayed", "true".parse().unwrap());
        }
        out
    };
    match act {
        Act::Forward => forward().await,
        Act::ForwardThen503 => {
            let _ = forward().await;
            error_json(
                StatusCode::SERVICE_UNAVAILABLE,
                "api_error",
                "internal_error",
            )
        }
        Act::Unavailable => error_json(
            StatusCode::SERVICE_UNAVAILABLE,
            "api_error",
            "internal_error",
        ),
        Act::TooMany(secs) => {
            let mut r = error_json(
                StatusCode::TOO_MANY_REQUESTS,
                "rate_limit_error",
                "rate_limit",
            );
            r.headers_mut()
                .insert("retry-after", secs.to_string().parse().unwrap());
            r
        }
        Act::InFlight => error_json(
            StatusCode::CONFLICT,
            "idempotency_error",
            "idempotency_key_in_use",
        ),
        Act::BadRequest => error_json(
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            "parameter_invalid",
        ),
    }
}

/// A stub in front of `upstream` (`http://host:port`, no path) following `script`.
async fn spawn_stub(upstream: &str, script: Vec<Act>) -> (String, Stub) {
    let stub = Stub {
        upstream: upstream.to_string(),
        script: Arc::new(script),
        seen: Arc::default(),
        http: reqwest::Client::new(),
    };
    let app = axum::Router::new()
        .fallback(stub_handler)
        .with_state(stub.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}/v2"), stub)
}

fn upstream(server: &Server) -> String {
    server.base.trim_end_matches("/v2").to_string()
}

async fn payment_count(client: &Client) -> usize {
    client
        .payments()
        .list(&ListPayments {
            limit: Some(100),
            ..Default::default()
        })
        .await
        .unwrap()
        .data
        .len()
}

#[tokio::test]
async fn post_is_retried_after_503s_with_the_same_idempotency_key() {
    let server = spawn_server().await;
    let (base, stub) = spawn_stub(
        &upstream(&server),
        vec![Act::Unavailable, Act::Unavailable, Act::Forward],
    )
    .await;
    let via_stub = Client::builder(base, &server.sk)
        .retry_policy(fast_retries())
        .build();
    let payment = via_stub
        .payments()
        .create(&CreatePayment::new(1234, "usd", card("4242424242424242")))
        .await
        .unwrap();
    assert_eq!(payment.status, PaymentStatus::Succeeded);
    let keys = stub.keys();
    assert_eq!(keys.len(), 3);
    let first = keys[0].clone().expect("POSTs carry an idempotency key");
    assert!(keys.iter().all(|k| k.as_deref() == Some(first.as_str())));
    assert_eq!(payment_count(&client(&server)).await, 1);

    // The next logical call gets a new key.
    via_stub
        .customers()
        .create(&CreateCustomer::default())
        .await
        .unwrap();
    let keys = stub.keys();
    assert_ne!(keys[3], keys[0]);
}

#[tokio::test]
async fn payment_whose_answer_was_lost_is_charged_once() {
    let server = spawn_server().await;
    let (base, stub) = spawn_stub(&upstream(&server), vec![Act::ForwardThen503]).await;
    let via_stub = Client::builder(base, &server.sk)
        .retry_policy(fast_retries())
        .build();
    let payment = via_stub
        .payments()
        .create(&CreatePayment::new(700, "usd", card("4242424242424242")))
        .await
        .unwrap();
    assert_eq!(stub.keys().len(), 2);
    let direct = client(&server);
    assert_eq!(payment_count(&direct).await, 1);
    assert_eq!(
        direct.payments().retrieve(&payment.id).await.unwrap(),
        payment
    );

    // Your own key: the same logical payment from a "restarted process" is replayed.
    let options = RequestOptions {
        idempotency_key: Some("order-1001".into()),
    };
    let params = CreatePayment::new(900, "usd", card("4242424242424242"));
    let a = direct
        .payments()
        .create_with(&params, &options)
        .await
        .unwrap();
    let b = direct
        .payments()
        .create_with(&params, &options)
        .await
        .unwrap();
    assert_eq!(a, b);
    assert_eq!(payment_count(&direct).await, 2);
}

#[tokio::test]
async fn rate_limits_and_in_flight_conflicts_are_retried_honouring_retry_after() {
    let server = spawn_server().await;
    let (base, stub) = spawn_stub(
        &upstream(&server),
        vec![Act::TooMany(1), Act::InFlight, Act::Forward],
    )
    .await;
    let via_stub = Client::builder(base, &server.sk)
        .retry_policy(fast_retries())
        .build();
    via_stub
        .customers()
        .create(&CreateCustomer::default())
        .await
        .unwrap();
    let seen = stub.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 3);
    assert!(
        seen[1].1 - seen[0].1 >= Duration::from_millis(950),
        "Retry-After: 1 was not honoured"
    );
    assert!(seen.iter().all(|(k, _)| *k == seen[0].0));

    // A Retry-After beyond the policy's limit is returned, not waited for.
    let (base, stub) = spawn_stub(&upstream(&server), vec![Act::TooMany(3600)]).await;
    let via_stub = Client::builder(base, &server.sk)
        .retry_policy(fast_retries())
        .build();
    let err = api_error(via_stub.customers().list(&Default::default()).await);
    assert_eq!(
        (err.status, err.kind, err.retry_after),
        (
            429,
            ErrorType::RateLimitError,
            Some(Duration::from_secs(3600))
        )
    );
    assert_eq!(stub.keys().len(), 1);
}

#[tokio::test]
async fn client_errors_are_not_retried() {
    let server = spawn_server().await;
    let (base, stub) = spawn_stub(&upstream(&server), vec![Act::BadRequest]).await;
    let via_stub = Client::builder(base, &server.sk)
        .retry_policy(fast_retries())
        .build();
    let err = api_error(
        via_stub
            .customers()
            .create(&CreateCustomer::default())
            .await,
    );
    assert_eq!((err.status, err.code.as_str()), (400, "parameter_invalid"));
    assert_eq!(stub.keys().len(), 1);

    // Real 4xx answers from the server, through the stub: one request each.
    let (base, stub) = spawn_stub(&upstream(&server), vec![]).await;
    let via_stub = Client::builder(base, &server.sk)
        .retry_policy(fast_retries())
        .build();
    let err = api_error(
        via_stub
            .payments()
            .create(&CreatePayment::new(2000, "usd", card("4000000000000002")))
            .await,
    );
    assert_eq!(err.status, 402);
    let err = api_error(via_stub.refunds().retrieve("re_missing").await);
    assert_eq!(err.status, 404);
    assert_eq!(stub.keys().len(), 2);
}

#[tokio::test]
async fn network_errors_are_retried_then_reported_as_transport_errors() {
    // A port nobody listens on.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let client = Client::builder(format!("http://{addr}"), "sk_test_x")
        .retry_policy(RetryPolicy {
            max_retries: 2,
            initial_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_millis(100),
            ..RetryPolicy::default()
        })
        .build();
    let started = Instant::now();
    let err = client
        .customers()
        .create(&CreateCustomer::default())
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Transport(_)), "{err:?}");
    // Two backoffs of 50–100 ms each were waited.
    assert!(started.elapsed() >= Duration::from_millis(100));
}

#[tokio::test]
async fn event_stream_yields_new_events_and_resumes_after_the_last_one_seen() {
    let server = spawn_server().await;
    let client = client(&server);
    let customers = client.customers();
    customers.create(&CreateCustomer::default()).await.unwrap();
    async fn next(
        s: &mut futures::stream::BoxStream<'static, Result<StreamedEvent, Error>>,
    ) -> StreamedEvent {
        tokio::time::timeout(Duration::from_secs(5), s.try_next())
            .await
            .expect("an event within 5 s")
            .unwrap()
            .unwrap()
    }

    // Only what happens after connecting, oldest first, as the server sent it.
    let mut stream = client.events().stream(None).await.unwrap();
    let first = customers.create(&CreateCustomer::default()).await.unwrap();
    let second = customers.create(&CreateCustomer::default()).await.unwrap();
    let a = next(&mut stream).await;
    let event = a.event().unwrap();
    assert_eq!(event.kind, "customer.created");
    assert_eq!(event.customer().unwrap().id, first.id);
    assert_eq!(a.id, event.id);
    let b = next(&mut stream).await;
    assert_eq!(b.event().unwrap().customer().unwrap().id, second.id);
    // The body is the event's JSON as the API serves it.
    let retrieved = client.events().retrieve(&a.id).await.unwrap();
    assert_eq!(retrieved, event);
    drop(stream);

    // Reconnecting after the first event replays the second, then goes on.
    let mut resumed = client.events().stream(Some(&a.id)).await.unwrap();
    assert_eq!(next(&mut resumed).await, b);
    let third = customers.create(&CreateCustomer::default()).await.unwrap();
    let c = next(&mut resumed).await;
    assert_eq!(c.event().unwrap().customer().unwrap().id, third.id);

    // An unknown id or a wrong key is refused before any event.
    let unknown = client.events().stream(Some("evt_doesnotexist")).await;
    let e = api_error(unknown.map(|_| ()));
    assert_eq!((e.status, e.code.as_str()), (400, "resource_missing"));
    let wrong = Client::new(&server.base, "sk_test_wrongwrongwrongwrongwrong");
    let e = api_error(wrong.events().stream(None).await.map(|_| ()));
    assert_eq!(e.status, 401);
}

#[tokio::test]
async fn a_silent_event_stream_is_given_up_as_stalled() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    // A server that answers one event, then keeps the connection open without a byte more
    // (not even the keep-alive): a peer gone without closing it.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut request = [0u8; 4096];
        let _ = socket.read(&mut request).await.unwrap();
        socket
            .write_all(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n\
                  id: evt_1\ndata: {\"id\":\"evt_1\"}\n\n",
            )
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_secs(30)).await;
        drop(socket);
    });
    let client = Client::builder(format!("http://{addr}/v2"), "sk_test_x")
        .stream_idle_timeout(Duration::from_millis(300))
        .build();
    let mut stream = client.events().stream(None).await.unwrap();
    let first = stream.try_next().await.unwrap().unwrap();
    assert_eq!(first.id, "evt_1");
    let started = Instant::now();
    match stream.try_next().await {
        Err(Error::Stalled { idle }) => assert_eq!(idle, Duration::from_millis(300)),
        other => panic!("expected a stall, got {other:?}"),
    }
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the stall was noticed"
    );
    assert!(
        stream.try_next().await.unwrap().is_none(),
        "a stalled stream ends"
    );
}

#[tokio::test]
async fn an_endless_stream_line_is_given_up_at_one_mebibyte() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    // T3-L4: a server that sends one event, then a line that never ends. The client stops
    // reading past 1 MiB of it instead of buffering it all.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let sent = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = sent.clone();
    tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let mut request = [0u8; 4096];
        let _ = socket.read(&mut request).await.unwrap();
        socket
            .write_all(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\n\
                  id: evt_1\ndata: {\"id\":\"evt_1\"}\n\ndata: ",
            )
            .await
            .unwrap();
        let chunk = vec![b'x'; 64 * 1024];
        // Up to 64 MiB, for as long as the client reads.
        for _ in 0..1024 {
            if socket.write_all(&chunk).await.is_err() {
                break;
            }
            counted.fetch_add(chunk.len(), std::sync::atomic::Ordering::SeqCst);
        }
    });
    let client = Client::builder(format!("http://{addr}/v2"), "sk_test_x").build();
    let mut stream = client.events().stream(None).await.unwrap();
    assert_eq!(stream.try_next().await.unwrap().unwrap().id, "evt_1");
    match stream.try_next().await {
        Err(Error::UnexpectedResponse { body, .. }) => {
            assert!(body.contains("longer than"), "{body}")
        }
        other => panic!("expected the line to be refused, got {other:?}"),
    }
    assert!(
        stream.try_next().await.unwrap().is_none(),
        "the stream ends"
    );
    drop(stream);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let read = sent.load(std::sync::atomic::Ordering::SeqCst);
    assert!(read < 16 << 20, "the client went on reading: {read} bytes");
}
