//! The second security review's connector findings (CONTRACT §15, §17): where card data may go
//! (T3-H2), what a processor's word may do to the ledger (T3-H1), and how much of its answer
//! Tender reads, stores and logs (T3-M1). The processor here is a fake Stripe the test steers,
//! standing in for one the key holder controls; localstripe is the honest one elsewhere.

use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::Response;
use serde_json::{json, Value};
use tender_core::connectors::service::{ChangedBy, ConnectorFields};

use crate::helpers::{spawn_app, spawn_app_with, Options, TestApp};

/// What the fake processor answers, per call, and what it was sent.
#[derive(Default)]
struct Script {
    /// `POST /v1/payment_intents/{id}/confirm`: status and JSON.
    confirm: Option<(u16, Value)>,
    /// `GET /v1/payment_intents/{id}`.
    read: Option<Value>,
    /// Every call's method, path and body, in order.
    seen: Vec<String>,
    /// When set, `POST /v1/payment_intents` answers this status with this many bytes of text.
    refuse_create: Option<(u16, usize)>,
    /// `GET /v1/balance_transactions/txn_fake1`: the charge's booking (default: 1000, fee 59).
    txn: Option<Value>,
    /// `POST /v1/refunds`: the refund it says it made (default: none, 500).
    refund: Option<Value>,
}

#[derive(Clone)]
struct Fake {
    base: String,
    script: Arc<Mutex<Script>>,
}

impl Fake {
    async fn start() -> Self {
        let script = Arc::new(Mutex::new(Script::default()));
        let app = axum::Router::new()
            .fallback(answer)
            .with_state(script.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        Self { base, script }
    }

    fn set(&self, f: impl FnOnce(&mut Script)) {
        f(&mut self.script.lock().unwrap());
    }

    fn seen(&self) -> Vec<String> {
        self.script.lock().unwrap().seen.clone()
    }
}

/// A PaymentIntent `pi_fake1` of `amount` in usd with `status` and what it says it received.
fn intent(status: &str, received: Value, currency: &str) -> Value {
    json!({"id": "pi_fake1", "object": "payment_intent", "status": status, "amount": 1000,
           "amount_received": received, "currency": currency, "latest_charge": "ch_fake1"})
}

/// A charge's balance transaction as the fake books it.
fn booking(amount: i64, fee: i64, net: i64, currency: &str) -> Value {
    json!({"id": "txn_fake1", "object": "balance_transaction", "type": "charge", "amount": amount,
           "fee": fee, "net": net, "currency": currency,
           "fee_details": [{"amount": fee, "currency": currency, "type": "stripe_fee",
                            "description": "Stripe processing fees"}]})
}

async fn answer(State(script): State<Arc<Mutex<Script>>>, request: Request) -> Response {
    let (method, path) = (request.method().clone(), request.uri().path().to_string());
    let body = axum::body::to_bytes(request.into_body(), 1 << 20)
        .await
        .unwrap_or_default();
    let mut s = script.lock().unwrap();
    s.seen.push(format!(
        "{method} {path} {}",
        String::from_utf8_lossy(&body)
    ));
    let json = |status: u16, v: Value| {
        Response::builder()
            .status(status)
            .header("content-type", "application/json")
            .body(Body::from(v.to_string()))
            .unwrap()
    };
    match (method.as_str(), path.as_str()) {
        ("POST", "/v1/payment_methods") => json(200, json!({"id": "pm_fake"})),
        ("POST", "/v1/payment_intents") => match s.refuse_create {
            Some((status, bytes)) => Response::builder()
                .status(status)
                .header("content-type", "text/plain")
                .body(Body::from("x".repeat(bytes)))
                .unwrap(),
            None => json(
                200,
                json!({"id": "pi_fake1", "object": "payment_intent",
                       "status": "requires_confirmation", "amount": 1000, "currency": "usd"}),
            ),
        },
        ("POST", p) if p.ends_with("/confirm") => {
            let (status, v) = s
                .confirm
                .clone()
                .unwrap_or((200, intent("requires_action", json!(0), "usd")));
            json(status, v)
        }
        ("GET", "/v1/refunds") => json(200, json!({"object": "list", "data": []})),
        ("POST", "/v1/refunds") => match s.refund.clone() {
            Some(r) => json(200, r),
            None => json(500, json!({"error": {"message": "down"}})),
        },
        ("GET", "/v1/charges/ch_fake1") => json(
            200,
            json!({"id": "ch_fake1", "object": "charge", "balance_transaction": "txn_fake1"}),
        ),
        ("GET", "/v1/balance_transactions/txn_fake1") => json(
            200,
            s.txn
                .clone()
                .unwrap_or_else(|| booking(1000, 59, 941, "usd")),
        ),
        ("GET", p) if p.starts_with("/v1/payment_intents/") => json(
            200,
            s.read
                .clone()
                .unwrap_or_else(|| intent("requires_action", json!(0), "usd")),
        ),
        _ => json(404, json!({"error": {"message": "no such route"}})),
    }
}

/// A server whose operator allows connector targets through the API, with one stripe
/// connector at `fake` that takes cards.
async fn app_with(fake: &Fake) -> (TestApp, String) {
    let app = spawn_app_with(Options {
        connector_settings_via_api: true,
        ..Options::default()
    })
    .await
    .expect("app");
    let created = app
        .post(
            "/v2/connectors",
            app.sk(),
            json!({"type": "stripe", "api_key": "sk_test_fake", "api_base": fake.base,
                   "raw_card_data": true, "webhook_secret": "whsec_fake_connector_secret"}),
        )
        .await;
    assert_eq!(created.status, 200, "{}", created.body);
    (app, created.id())
}

async fn sync_now(app: &TestApp) {
    app.clock
        .advance(tender_core::payments::upstream::FIRST_SYNC_SECS + 1);
    app.services.run_due_tasks(100).await.unwrap();
}

/// The clock an hour on (the longest a payment waits between syncs), and what is due run.
async fn sync_within_the_hour(app: &TestApp) {
    app.clock
        .advance(tender_core::payments::upstream::MAX_SYNC_INTERVAL_SECS + 1);
    app.services.run_due_tasks(100).await.unwrap();
}

#[tokio::test]
async fn a_merchants_key_cannot_choose_where_card_data_goes() {
    let Some(app) = spawn_app().await else {
        return;
    };
    // T3-H2: the address and the card data of a processor connector are the operator's.
    for (body, param) in [
        (
            json!({"type": "stripe", "api_key": "sk_test_x1", "api_base": "http://127.0.0.1:9"}),
            "api_base",
        ),
        (
            json!({"type": "stripe", "api_key": "sk_test_x1", "raw_card_data": true}),
            "raw_card_data",
        ),
    ] {
        let refused = app.post("/v2/connectors", app.sk(), body).await;
        assert_eq!(refused.status, 400, "{}", refused.body);
        assert_eq!(refused.error_code(), "operator_only");
        assert_eq!(refused.error_param(), param);
        let live = app.post("/v2/connectors", app.sk_live(), json!({"type": "stripe",
            "api_key": "sk_live_x1", "api_base": "https://collector.example", "raw_card_data": true})).await;
        assert_eq!(live.status, 400, "{}", live.body);
    }
    assert_eq!(
        app.get("/v2/connectors", app.sk()).await.body["data"],
        json!([])
    );
    // Tokens only, at the processor's public address: allowed, and it gets no card.
    let tokens = app
        .post(
            "/v2/connectors",
            app.sk(),
            json!({"type": "stripe", "api_key": "sk_test_x1", "raw_card_data": false}),
        )
        .await;
    assert_eq!(tokens.status, 200, "{}", tokens.body);
    assert_eq!(tokens.body["raw_card_data"], false);
    let conn = tokens.id();
    for body in [
        json!({"raw_card_data": true}),
        json!({"api_base": "http://127.0.0.1:9"}),
    ] {
        let refused = app
            .post(&format!("/v2/connectors/{conn}"), app.sk(), body)
            .await;
        assert_eq!(refused.status, 400, "{}", refused.body);
        assert_eq!(refused.error_code(), "operator_only");
    }
    // The simulator keeps a card in the process: the merchant may let it take them.
    let sim = app
        .post(
            "/v2/connectors",
            app.sk(),
            json!({"type": "simulator", "raw_card_data": true, "priority": 5}),
        )
        .await;
    assert_eq!(sim.status, 200, "{}", sim.body);
    // A card, or one saved before: never sent to the token-only processor first in line.
    let pm = app
        .post(
            "/v2/payment_methods",
            app.pk(),
            crate::helpers::card("4242424242424242"),
        )
        .await;
    assert_eq!(pm.status, 200, "{}", pm.body);
    let refused = app
        .post(
            "/v2/payments",
            app.sk(),
            json!({"amount": 1000, "currency": "usd", "payment_method": pm.id()}),
        )
        .await;
    assert_eq!(refused.status, 400, "{}", refused.body);
    assert_eq!(refused.error_code(), "connector_requires_token");

    // The operator sets them (the CLI's path), and the card then goes there.
    let fake = Fake::start().await;
    let ctx = tender_core::services::RequestContext {
        principal: tender_core::auth::Principal {
            scope: tender_core::auth::Scope {
                account: app.account.account.clone(),
                mode: tender_core::auth::Mode::Test,
            },
            key_kind: tender_core::auth::KeyKind::Secret,
        },
        request_id: "req_operator".into(),
        idempotency: None,
        client: None,
    };
    let set = app
        .services
        .connectors()
        .update_connector(
            &ctx,
            &conn,
            ConnectorFields {
                api_base: Some(fake.base.clone()),
                raw_card_data: Some(true),
                ..Default::default()
            },
            ChangedBy::Operator,
        )
        .await
        .unwrap();
    assert!(set.raw_card_data);
    fake.set(|s| s.confirm = Some((200, intent("succeeded", json!(1000), "usd"))));
    let paid = app
        .post(
            "/v2/payments",
            app.sk(),
            json!({"amount": 1000, "currency": "usd", "payment_method": pm.id()}),
        )
        .await;
    assert_eq!(paid.status, 200, "{}", paid.body);
    assert_eq!(paid.body["connector"], conn.as_str());
    assert!(fake.seen()[0].contains("card%5Bnumber%5D=4242424242424242"));
}

#[tokio::test]
async fn a_processors_amounts_outside_the_payment_are_never_booked() {
    let fake = Fake::start().await;
    let (app, conn) = app_with(&fake).await;
    // T3-H1: the processor says it took far more than the payment's amount, or another
    // currency, or answers about another PaymentIntent: nothing is booked, the payment waits.
    for confirm in [
        intent("succeeded", json!(1_000_000_000_000i64), "usd"),
        intent("succeeded", json!(i64::MAX), "usd"),
        intent("succeeded", json!(-5000), "usd"),
        intent("succeeded", json!(1000), "eur"),
        {
            let mut other = intent("succeeded", json!(1000), "usd");
            other["id"] = json!("pi_someone_else");
            other
        },
    ] {
        fake.set(|s| s.confirm = Some((200, confirm.clone())));
        let paid = app.pay(app.sk(), "4242424242424242", 1000).await;
        assert_eq!(paid.status, 200, "{confirm}: {}", paid.body);
        assert_eq!(paid.body["status"], "processing", "{confirm}");
        assert_eq!(paid.body["amount_captured"], 0);
        assert_eq!(paid.body["connector"], conn.as_str());
    }
    let balance = app.get("/v2/balance", app.sk()).await;
    assert_eq!(balance.status, 200);
    assert_eq!(balance.body["pending"], json!([]), "{}", balance.body);
    assert_eq!(
        app.get("/v2/balance_transactions", app.sk()).await.body["data"],
        json!([])
    );
    // The sync asks again; while the processor keeps saying it, nothing moves.
    fake.set(|s| s.read = Some(intent("succeeded", json!(1_000_000_000_000i64), "usd")));
    sync_now(&app).await;
    let list = app.get("/v2/payments?status=processing", app.sk()).await;
    assert_eq!(list.body["data"].as_array().unwrap().len(), 5);
    // Its booking of the capture is checked as well: a fee over the amount, a net that is not
    // amount less fee, another amount or currency than the capture's: nothing moves.
    fake.set(|s| s.read = Some(intent("succeeded", json!(1000), "usd")));
    for lie in [
        booking(1000, 5000, -4000, "usd"),
        booking(1000, 59, 1000, "usd"),
        booking(999_999, 59, 999_940, "usd"),
        booking(1000, 59, 941, "eur"),
    ] {
        fake.set(|s| s.txn = Some(lie.clone()));
        sync_within_the_hour(&app).await;
        let list = app.get("/v2/payments?status=processing", app.sk()).await;
        assert_eq!(list.body["data"].as_array().unwrap().len(), 5, "{lie}");
    }
    // Once it tells the truth, each is booked for what it was, with the processor's fee.
    fake.set(|s| s.txn = None);
    sync_within_the_hour(&app).await;
    sync_within_the_hour(&app).await;
    let done = app.get("/v2/payments?status=succeeded", app.sk()).await;
    let done = done.body["data"].as_array().unwrap();
    // The one whose answer named another PaymentIntent is synced by its own reference.
    assert_eq!(done.len(), 5);
    assert!(done.iter().all(|p| p["amount_captured"] == 1000));
    let txns = app.get("/v2/balance_transactions", app.sk()).await;
    for t in txns.body["data"].as_array().unwrap() {
        assert_eq!(
            (t["fee"].as_i64(), t["net"].as_i64()),
            (Some(59), Some(941)),
            "{t}"
        );
        assert_eq!(t["fee_details"][0]["type"], "processor_fee");
        assert_eq!(t["connector"], conn.as_str());
    }
    // The money is the processor's (available there after the delay), never Tender's to pay
    // out.
    app.clock.advance(120);
    app.services.run_due_tasks(100).await.unwrap();
    let balance = app.get("/v2/balance", app.sk()).await;
    assert_eq!(
        balance.body["available"],
        json!([{"amount": 0, "currency": "usd"}])
    );
    assert_eq!(
        balance.body["processors"]["available"],
        json!([{"amount": 5 * 941, "currency": "usd"}]),
        "{}",
        balance.body
    );
    assert!(app.ledger_problems().await.is_empty());
}

/// `Stripe-Signature` for `body` under `secret`, now.
fn sign(app: &TestApp, secret: &str, body: &[u8]) -> String {
    use hmac::Mac;
    let t = app.services.now();
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(format!("{t}.").as_bytes());
    mac.update(body);
    format!("t={t},v1={}", hex::encode(mac.finalize().into_bytes()))
}

#[tokio::test]
async fn a_processors_webhook_is_a_hint_checked_with_the_processor() {
    let fake = Fake::start().await;
    let (app, conn) = app_with(&fake).await;
    let waiting = app.pay(app.sk(), "4242424242424242", 1000).await;
    assert_eq!(
        waiting.body["status"], "requires_action",
        "{}",
        waiting.body
    );
    let id = waiting.id();
    let hook = |received: Value| {
        serde_json::to_vec(&json!({"type": "payment_intent.succeeded",
            "data": {"object": {"object": "payment_intent", "id": "pi_fake1", "status": "succeeded",
                                "amount_received": received, "currency": "usd",
                                "metadata": {"tender_payment": id}}}}))
        .unwrap()
    };
    let post = |body: Vec<u8>| {
        let signature = sign(&app, "whsec_fake_connector_secret", &body);
        app.client
            .post(format!("{}/connector_webhooks/{conn}", app.base))
            .header("Stripe-Signature", signature)
            .header("Content-Type", "application/json")
            .body(body)
            .send()
    };
    // A signed webhook claiming i64::MAX, while the processor itself still says
    // requires_action: accepted as a hint, changes nothing.
    let sent = post(hook(json!(i64::MAX))).await.unwrap();
    assert_eq!(sent.status(), 200);
    let still = app.get(&format!("/v2/payments/{id}"), app.sk()).await;
    assert_eq!(still.body["status"], "requires_action");
    assert!(fake
        .seen()
        .iter()
        .any(|c| c.starts_with("GET /v1/payment_intents/pi_fake1")));
    // The processor says succeeded for i64::MAX: refused, still nothing.
    fake.set(|s| s.read = Some(intent("succeeded", json!(i64::MAX), "usd")));
    post(hook(json!(1000))).await.unwrap();
    let still = app.get(&format!("/v2/payments/{id}"), app.sk()).await;
    assert_eq!(still.body["status"], "requires_action");
    // The processor's own answer, not the webhook's amount, moves it.
    fake.set(|s| s.read = Some(intent("succeeded", json!(1000), "usd")));
    post(hook(json!(9_999_999))).await.unwrap();
    let paid = app.get(&format!("/v2/payments/{id}"), app.sk()).await;
    assert_eq!(paid.body["status"], "succeeded");
    assert_eq!(paid.body["amount_captured"], 1000);
    assert!(app.ledger_problems().await.is_empty());
}

#[tokio::test]
async fn a_processors_long_answers_are_cut_and_never_break_a_list() {
    let fake = Fake::start().await;
    let (app, _) = app_with(&fake).await;
    // T3-M1: 20 KB of refusal text: the payment fails with at most 500 characters of it.
    fake.set(|s| s.refuse_create = Some((400, 20_000)));
    let refused = app.pay(app.sk(), "4242424242424242", 1000).await;
    assert_eq!(refused.status, 402, "{}", refused.body);
    let message = refused.body["error"]["message"].as_str().unwrap();
    assert!(message.chars().count() <= 500, "{}", message.len());
    // 3 MiB: read no further than 1 MiB, the payment fails as the processor unavailable.
    fake.set(|s| s.refuse_create = Some((400, 3 << 20)));
    let cut = app.pay(app.sk(), "4242424242424242", 1000).await;
    assert_eq!(cut.status, 402, "{}", cut.status);
    assert!(cut.raw.len() < 4096, "{}", cut.raw.len());
    assert_eq!(cut.body["error"]["decline_code"], "processor_unavailable");
    // Both are stored, short, and the account's lists still read.
    for path in ["/v2/payments", "/v2/events"] {
        let list = app.get(path, app.sk()).await;
        assert_eq!(list.status, 200, "{path}: {}", list.body);
        assert!(list.raw.len() < 64 * 1024, "{path}: {}", list.raw.len());
    }
}

#[tokio::test]
async fn the_connector_limit_holds_against_racing_creations() {
    let Some(app) = spawn_app().await else {
        return;
    };
    // T3-L2: 30 at once, 16 at most, on either backend.
    let made = futures::future::join_all((0..30).map(|i| {
        app.post(
            "/v2/connectors",
            app.sk(),
            json!({"type": "simulator", "priority": i}),
        )
    }))
    .await;
    assert_eq!(made.iter().filter(|r| r.status == 200).count(), 16);
    let refused = made.iter().find(|r| r.status != 200).unwrap();
    assert_eq!(refused.status, 400, "{}", refused.body);
    assert_eq!(refused.error_code(), "connectors_limit");
    let listed = app.get("/v2/connectors?limit=100", app.sk()).await;
    assert_eq!(listed.body["data"].as_array().unwrap().len(), 16);
}

#[tokio::test]
async fn a_connector_webhook_says_nothing_of_what_exists_and_its_refusals_are_throttled() {
    let fake = Fake::start().await;
    let (app, conn) = app_with(&fake).await;
    let body = br#"{"type":"payment_intent.succeeded","data":{"object":{"object":"payment_intent","id":"pi_x"}}}"#;
    let post = |path: String, signature: &'static str| {
        app.client
            .post(format!("{}/connector_webhooks/{path}", app.base))
            .header("Stripe-Signature", signature)
            .header("Content-Type", "application/json")
            .body(body.to_vec())
            .send()
    };
    // T3-I2: a real connector with a bad signature and no connector at all: the same answer.
    let answers = [
        post(conn.clone(), "t=1,v1=00").await.unwrap(),
        post("conn_000000000000000000000000".into(), "t=1,v1=00")
            .await
            .unwrap(),
        post("nonsense".into(), "t=1,v1=00").await.unwrap(),
    ];
    let mut bodies = Vec::new();
    for a in answers {
        assert_eq!(a.status(), 400);
        let mut v: Value = a.json().await.unwrap();
        v["error"]["request_id"] = Value::Null;
        bodies.push(v);
    }
    assert!(bodies.windows(2).all(|w| w[0] == w[1]), "{bodies:?}");
    // More than 60 refusals a minute from one address: 429.
    let mut limited = false;
    for _ in 0..70 {
        if post(conn.clone(), "t=1,v1=00").await.unwrap().status() == 429 {
            limited = true;
            break;
        }
    }
    assert!(limited, "refused webhooks are not throttled");
    // A secret must be more than its prefix.
    for secret in ["whsec_", "whsec_a", "whsec_secretA123"] {
        let refused = app
            .post(
                &format!("/v2/connectors/{conn}"),
                app.sk(),
                json!({"webhook_secret": secret}),
            )
            .await;
        assert_eq!(refused.status, 400, "{secret}");
        assert_eq!(refused.error_param(), "webhook_secret");
    }
}

#[tokio::test]
async fn urls_naming_a_cloud_metadata_service_are_refused_in_both_modes() {
    let Some(app) = spawn_app_with(Options {
        allow_private_webhook_targets: true,
        connector_settings_via_api: true,
        ..Options::default()
    })
    .await
    else {
        return;
    };
    for (key, scheme) in [(app.sk(), "http"), (app.sk_live(), "https")] {
        for host in [
            "metadata.google.internal",
            "METADATA.GOOGLE.INTERNAL.",
            "metadata.azure.com",
            "169.254.169.254",
            "[fd00:ec2::254]",
            "100.100.100.200",
        ] {
            let url = format!("{scheme}://{host}/hook");
            let refused = app
                .post(
                    "/v2/webhook_endpoints",
                    key,
                    json!({"url": url, "enabled_events": ["*"]}),
                )
                .await;
            assert_eq!(refused.status, 400, "{url}: {}", refused.body);
            assert_eq!(refused.error_code(), "url_invalid", "{url}");
        }
    }
    let connector = app
        .post(
            "/v2/connectors",
            app.sk(),
            json!({"type": "stripe", "api_key": "sk_test_x1", "api_base": "http://metadata.google.internal"}),
        )
        .await;
    assert_eq!(connector.status, 400, "{}", connector.body);
    assert_eq!(connector.error_param(), "api_base");
}

#[tokio::test]
async fn a_processors_answer_to_a_refund_is_believed_only_for_what_was_asked() {
    let fake = Fake::start().await;
    let (app, _) = app_with(&fake).await;
    fake.set(|s| s.confirm = Some((200, intent("succeeded", json!(1000), "usd"))));
    let paid = app.pay(app.sk(), "4242424242424242", 1000).await;
    assert_eq!(paid.body["status"], "succeeded", "{}", paid.body);
    // It says it refunded far more, or in another currency: not believed, the refund waits.
    let refund = |amount: i64, currency: &str| {
        json!({"id": "re_fake1", "object": "refund", "status": "succeeded", "amount": amount,
               "currency": currency, "metadata": {}})
    };
    for lie in [refund(999_999, "usd"), refund(300, "eur")] {
        fake.set(|s| s.refund = Some(lie.clone()));
        let r = app
            .post(
                "/v2/refunds",
                app.sk(),
                json!({"payment": paid.id(), "amount": 300}),
            )
            .await;
        assert_eq!(r.body["status"], "pending", "{lie}: {}", r.body);
    }
    // Told the truth on the next sync, each is done.
    fake.set(|s| s.refund = Some(refund(300, "usd")));
    sync_within_the_hour(&app).await;
    let listed = app
        .get(&format!("/v2/refunds?payment={}", paid.id()), app.sk())
        .await;
    let statuses: Vec<&str> = listed.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["succeeded", "succeeded"], "{}", listed.body);
    assert!(app.ledger_problems().await.is_empty());
}
