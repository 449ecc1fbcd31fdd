//! `docs/openapi.json` against the real server, both ways:
//!
//! - it is served at `/v2/openapi.json` without a key, byte for byte;
//! - every documented operation is routed (no `Unrecognized request URL.` 404, no 405), and every
//!   method a documented path does not list is a 405;
//! - every row of the route table (`tender_server::http::routes::ROUTES`) is documented;
//! - real responses (successes and errors of every kind) have a status the operation documents
//!   and a body that validates against the documented schema, with the documented headers.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeSet;
use std::time::Duration;

use common::{spawn_app, App};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

const DOCUMENT: &str = include_str!("../../../docs/openapi.json");
const METHODS: &[&str] = &["get", "post", "put", "patch", "delete"];

fn document() -> Value {
    serde_json::from_str(DOCUMENT).expect("docs/openapi.json is JSON")
}

/// Every `(path, method)` the document lists, with the full `/v2…` path.
fn documented_operations(doc: &Value) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, _) in item.as_object().expect("path item") {
            if METHODS.contains(&method.as_str()) {
                out.insert((format!("/v2{path}"), method.clone()));
            }
        }
    }
    out
}

struct Reply {
    status: StatusCode,
    headers: reqwest::header::HeaderMap,
    body: Value,
}

async fn call(
    app: &App,
    method: Method,
    path: &str,
    key: Option<&str>,
    body: Option<Value>,
) -> Reply {
    let client = reqwest::Client::new();
    let mut req = client.request(method, format!("{}{path}", app.base));
    if let Some(k) = key {
        req = req.bearer_auth(k);
    }
    if let Some(b) = body {
        req = req.json(&b);
    }
    let resp = req.send().await.expect("request");
    let status = resp.status();
    let headers = resp.headers().clone();
    let bytes = resp.bytes().await.expect("body");
    let body = serde_json::from_slice(&bytes).unwrap_or_else(|e| {
        panic!(
            "{path}: not JSON ({e}): {}",
            String::from_utf8_lossy(&bytes)
        )
    });
    Reply {
        status,
        headers,
        body,
    }
}

fn sk(app: &App) -> &str {
    &app.account.keys.test.secret
}

/// A well-formed id for a path parameter whose schema pattern is `^prefix[…]`.
fn dummy_id(doc: &Value, path: &str, method: &str) -> String {
    let params = doc["paths"][path][method]["parameters"]
        .as_array()
        .expect("parameters");
    let id = params
        .iter()
        .find(|p| p["in"] == "path" && p["name"] == "id")
        .expect("an id path parameter");
    let pattern = id["schema"]["pattern"].as_str().expect("id pattern");
    let prefix = pattern
        .trim_start_matches('^')
        .split('[')
        .next()
        .expect("prefix");
    format!("{prefix}{}", "0".repeat(24))
}

#[tokio::test]
async fn the_document_is_served_without_a_key_byte_for_byte() {
    let app = spawn_app().await;
    let resp = reqwest::get(format!("{}/v2/openapi.json", app.base))
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(
        resp.headers()["content-type"].to_str().unwrap(),
        "application/json"
    );
    assert!(resp.headers().contains_key("request-id"));
    assert_eq!(resp.headers()["tender-version"], "2.1");
    assert_eq!(resp.text().await.unwrap(), DOCUMENT);
    // Nothing else became public with it.
    let other = call(&app, Method::GET, "/v2/payments", None, None).await;
    assert_eq!(other.status, StatusCode::UNAUTHORIZED);
    // An invalid key does not stop the document either.
    let r = reqwest::Client::new()
        .get(format!("{}/v2/openapi.json", app.base))
        .bearer_auth("sk_test_nonsense")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
}

#[tokio::test]
async fn the_document_is_openapi_3_1_with_every_reference_resolving() {
    let doc = document();
    assert_eq!(doc["openapi"], "3.1.0");
    assert!(doc
        .pointer("/components/securitySchemes/bearerAuth")
        .is_some());
    assert!(doc
        .pointer("/components/securitySchemes/basicAuth")
        .is_some());
    // The enumerations follow the domain's own lists.
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .expect("an enum")
            .iter()
            .map(|s| s.as_str().expect("a string").to_string())
            .collect()
    };
    let event_types: Vec<String> = tender_core::event::EVENT_TYPES
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(
        strings(&doc["components"]["schemas"]["EventType"]["enum"]),
        event_types,
        "EventType in docs/openapi.json differs from tender_core::event::EVENT_TYPES"
    );
    let mut with_star = event_types.clone();
    with_star.push("*".into());
    // What an endpoint shows may also be Stripe's names: one created through /v1 listens to those.
    let mut shown = with_star.clone();
    for (_, name, _) in tender_core::stripe::events::MAP {
        if !shown.iter().any(|s| s == name) {
            shown.push(name.to_string());
        }
    }
    for (schema, expected) in [
        ("WebhookEndpoint", &shown),
        ("WebhookEndpointCreate", &with_star),
    ] {
        assert_eq!(
            &strings(
                &doc["components"]["schemas"][schema]["properties"]["enabled_events"]["items"]
                    ["enum"]
            ),
            expected,
            "{schema}.enabled_events"
        );
    }
    let statuses: Vec<String> = tender_core::payments::payment::PaymentStatus::ALL
        .iter()
        .map(|s| s.as_str().to_string())
        .collect();
    assert_eq!(
        strings(&doc["components"]["schemas"]["Payment"]["properties"]["status"]["enum"]),
        statuses
    );
    // Every $ref points at something.
    fn walk(v: &Value, doc: &Value, bad: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                if let Some(Value::String(r)) = m.get("$ref") {
                    let ptr = r.trim_start_matches('#');
                    if !r.starts_with('#') || doc.pointer(ptr).is_none() {
                        bad.push(r.clone());
                    }
                }
                m.values().for_each(|x| walk(x, doc, bad));
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, doc, bad)),
            _ => {}
        }
    }
    let mut bad = Vec::new();
    walk(&doc, &doc, &mut bad);
    assert!(bad.is_empty(), "dangling references: {bad:?}");
    // Every operation has an id, documents 200 and the errors every request can meet.
    let mut ids = BTreeSet::new();
    for (path, method) in documented_operations(&doc) {
        let op = &doc["paths"][&path["/v2".len()..]][&method];
        let id = op["operationId"].as_str().expect("operationId");
        assert!(ids.insert(id.to_string()), "duplicate operationId {id}");
        let responses = op["responses"].as_object().unwrap();
        assert!(responses.contains_key("200"), "{method} {path}: no 200");
        if path != "/v2/openapi.json" {
            for status in ["400", "401", "403", "429", "500", "503"] {
                assert!(
                    responses.contains_key(status),
                    "{method} {path}: {status} undocumented"
                );
            }
            if path.contains("{id}") {
                assert!(responses.contains_key("404"), "{method} {path}: no 404");
            }
            if method != "get" {
                for status in ["413", "415"] {
                    assert!(
                        responses.contains_key(status),
                        "{method} {path}: {status} undocumented"
                    );
                }
            }
        }
    }
}

/// `(path, method)` of every operation the server routes: the route table's rows, and the
/// document itself.
fn routed_operations() -> BTreeSet<(String, String)> {
    let mut out: BTreeSet<_> = tender_server::http::routes::ROUTES
        .iter()
        .map(|r| {
            (
                format!("/v2{}", r.path),
                r.method.as_str().to_ascii_lowercase(),
            )
        })
        .collect();
    out.insert((tender_server::http::openapi::PATH.to_string(), "get".into()));
    out
}

#[tokio::test]
async fn every_row_of_the_route_table_is_documented_and_the_reverse() {
    let doc = document();
    let documented = documented_operations(&doc);
    let routed = routed_operations();
    assert!(routed.contains(&("/v2/payments".into(), "post".into())));
    assert!(routed.contains(&("/v2/webhook_endpoints/{id}".into(), "delete".into())));
    let undocumented: Vec<_> = routed.difference(&documented).collect();
    assert!(
        undocumented.is_empty(),
        "routes missing from docs/openapi.json: {undocumented:?}"
    );
    let unrouted: Vec<_> = documented.difference(&routed).collect();
    assert!(
        unrouted.is_empty(),
        "documented but not in the route table: {unrouted:?}"
    );
}

fn is_unknown_path(r: &Reply) -> bool {
    r.status == StatusCode::NOT_FOUND && r.body["error"]["message"] == "Unrecognized request URL."
}

#[tokio::test]
async fn every_documented_operation_is_served_and_other_methods_are_405() {
    let app = spawn_app().await;
    let doc = document();
    let documented = documented_operations(&doc);
    for (path, method) in &documented {
        let doc_path = &path["/v2".len()..];
        let url = if path.contains("{id}") {
            path.replace("{id}", &dummy_id(&doc, doc_path, method))
        } else if doc_path == "/events/stream" && method == "get" {
            // The stream never ends: an unknown parameter is refused at once, which still
            // shows the path is routed (tests/api/stream.rs reads the stream itself).
            format!("{path}?limit=1")
        } else {
            path.clone()
        };
        let m = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
        let body = (m != Method::GET).then(|| json!({}));
        let r = call(&app, m.clone(), &url, Some(sk(&app)), body).await;
        assert!(
            !is_unknown_path(&r) && r.status != StatusCode::METHOD_NOT_ALLOWED,
            "{method} {url} is documented but not served: {} {}",
            r.status,
            r.body
        );
        // A missing object is 404 resource_missing, and documented as such.
        let responses = &doc["paths"][doc_path][method]["responses"];
        assert!(
            responses.get(r.status.as_str()).is_some(),
            "{method} {url}: {} is not documented",
            r.status
        );
        // Methods the path does not document are refused.
        for other in METHODS {
            if documented.contains(&(path.clone(), other.to_string())) {
                continue;
            }
            let om = Method::from_bytes(other.to_uppercase().as_bytes()).unwrap();
            let r = call(&app, om, &url, Some(sk(&app)), None).await;
            assert_eq!(
                r.status,
                StatusCode::METHOD_NOT_ALLOWED,
                "{other} {url} is served but not documented: {}",
                r.body
            );
            assert_eq!(r.body["error"]["code"], "method_not_allowed");
        }
    }
}

/// Validates replies against the document's response schemas.
struct Checker {
    doc: Value,
    checked: usize,
}

impl Checker {
    fn new() -> Self {
        Self {
            doc: document(),
            checked: 0,
        }
    }

    fn resolve<'a>(&'a self, mut v: &'a Value) -> &'a Value {
        while let Some(r) = v.get("$ref").and_then(Value::as_str) {
            v = self
                .doc
                .pointer(r.trim_start_matches('#'))
                .unwrap_or_else(|| panic!("dangling {r}"));
        }
        v
    }

    /// `reply` to `method path_template` must be documented, with its schema and headers.
    fn check(&mut self, method: &str, path: &str, reply: &Reply) {
        let op = &self.doc["paths"][path][method];
        assert!(op.is_object(), "{method} {path} is not documented");
        let status = reply.status.as_str();
        let response = op["responses"].get(status).unwrap_or_else(|| {
            panic!(
                "{method} {path}: status {status} is not documented ({})",
                reply.body
            )
        });
        let response = self.resolve(response).clone();
        let schema = &response["content"]["application/json"]["schema"];
        assert!(
            schema.is_object(),
            "{method} {path} {status}: no JSON schema"
        );
        // The schema with the whole document as its root, so that `#/components/…` resolves.
        let mut root = self.doc.clone();
        root.as_object_mut()
            .unwrap()
            .insert("$ref".into(), schema["$ref"].clone());
        let validator = jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .build(&root)
            .expect("the document compiles as JSON Schema");
        let errors: Vec<String> = validator
            .iter_errors(&reply.body)
            .map(|e| format!("{} at {}", e, e.instance_path))
            .collect();
        assert!(
            errors.is_empty(),
            "{method} {path} {status}: the body does not match {}:\n{}\n{}",
            schema["$ref"],
            errors.join("\n"),
            serde_json::to_string_pretty(&reply.body).unwrap()
        );
        if let Some(headers) = response["headers"].as_object() {
            for (name, h) in headers {
                let h = self.resolve(h);
                if h["required"] == true {
                    assert!(
                        reply.headers.contains_key(name.as_str()),
                        "{method} {path} {status}: header {name} missing"
                    );
                }
            }
        }
        self.checked += 1;
    }
}

fn card(number: &str) -> Value {
    json!({"type": "card", "card": {"number": number, "exp_month": 12, "exp_year": 2040, "cvc": "123"}})
}

#[tokio::test]
async fn real_responses_match_the_documented_schemas() {
    let app = spawn_app().await;
    let key = sk(&app).to_string();
    let k = Some(key.as_str());
    let mut c = Checker::new();
    let get = |p: String| {
        let app = &app;
        async move { call(app, Method::GET, &p, k, None).await }
    };
    let post = |p: String, b: Value| {
        let app = &app;
        async move { call(app, Method::POST, &p, k, Some(b)).await }
    };

    // Customers.
    let cus = post(
        "/v2/customers".into(),
        json!({"email": "a@example.com", "name": "A", "phone": "+4915112345678",
               "address": {"line1": "Street 1", "country": "de"}, "description": "d",
               "metadata": {"k": "v"}}),
    )
    .await;
    c.check("post", "/customers", &cus);
    let cus_id = cus.body["id"].as_str().unwrap().to_string();
    c.check(
        "post",
        "/customers",
        &post("/v2/customers".into(), json!({})).await,
    );
    c.check(
        "get",
        "/customers/{id}",
        &get(format!("/v2/customers/{cus_id}")).await,
    );
    let upd = call(
        &app,
        Method::PATCH,
        &format!("/v2/customers/{cus_id}"),
        k,
        Some(json!({"name": "", "address": null})),
    )
    .await;
    c.check("patch", "/customers/{id}", &upd);
    c.check(
        "post",
        "/customers/{id}",
        &post(format!("/v2/customers/{cus_id}"), json!({"email": "nope"})).await,
    );
    c.check(
        "get",
        "/customers",
        &get("/v2/customers?limit=2".into()).await,
    );

    // Payments: success, manual capture, 3-D Secure, bank transfer, decline, invalid card.
    let pay = post(
        "/v2/payments".into(),
        json!({"amount": 1000, "currency": "USD", "payment_method": card("4242424242424242"),
               "customer": cus_id, "description": "x", "metadata": {"order": "1"}}),
    )
    .await;
    assert_eq!(pay.status, StatusCode::OK, "{}", pay.body);
    c.check("post", "/payments", &pay);
    let pay_id = pay.body["id"].as_str().unwrap().to_string();
    let manual = post(
        "/v2/payments".into(),
        json!({"amount": 2000, "currency": "eur", "capture": false,
               "payment_method": card("5555555555554444")}),
    )
    .await;
    c.check("post", "/payments", &manual);
    let manual_id = manual.body["id"].as_str().unwrap().to_string();
    c.check(
        "post",
        "/payments/{id}/capture",
        &post(
            format!("/v2/payments/{manual_id}/capture"),
            json!({"amount": 1500}),
        )
        .await,
    );
    c.check(
        "post",
        "/payments/{id}/capture",
        &post(format!("/v2/payments/{manual_id}/capture"), json!({})).await,
    );
    let three_ds = post(
        "/v2/payments".into(),
        json!({"amount": 3000, "currency": "gbp", "return_url": "https://shop.example/done",
               "payment_method": card("4000002500003155")}),
    )
    .await;
    assert_eq!(three_ds.body["status"], "requires_action");
    c.check("post", "/payments", &three_ds);
    let three_ds_id = three_ds.body["id"].as_str().unwrap().to_string();
    c.check(
        "post",
        "/payments/{id}/cancel",
        &post(
            format!("/v2/payments/{three_ds_id}/cancel"),
            json!({"cancellation_reason": "abandoned"}),
        )
        .await,
    );
    let bank = post(
        "/v2/payments".into(),
        json!({"amount": 5000, "currency": "eur", "payment_method": {"type": "bank_transfer",
               "bank_transfer": {"iban": "DE89370400440532013000", "account_holder_name": "A B"}}}),
    )
    .await;
    assert_eq!(bank.body["status"], "processing", "{}", bank.body);
    c.check("post", "/payments", &bank);
    let declined = post(
        "/v2/payments".into(),
        json!({"amount": 1000, "currency": "usd", "payment_method": card("4000000000009995")}),
    )
    .await;
    assert_eq!(declined.status, StatusCode::PAYMENT_REQUIRED);
    c.check("post", "/payments", &declined);
    let invalid = post(
        "/v2/payments".into(),
        json!({"amount": 1000, "currency": "usd", "payment_method": card("4242424242424241")}),
    )
    .await;
    assert_eq!(invalid.status, StatusCode::PAYMENT_REQUIRED);
    c.check("post", "/payments", &invalid);
    let failed_id = declined.body["error"]["payment"]
        .as_str()
        .unwrap()
        .to_string();
    c.check(
        "get",
        "/payments/{id}",
        &get(format!("/v2/payments/{failed_id}")).await,
    );
    c.check(
        "get",
        "/payments/{id}",
        &get(format!("/v2/payments/{pay_id}")).await,
    );
    c.check(
        "post",
        "/payments/{id}",
        &post(
            format!("/v2/payments/{pay_id}"),
            json!({"metadata": {"order": ""}}),
        )
        .await,
    );
    c.check(
        "post",
        "/payments/{id}/capture",
        &post(format!("/v2/payments/{pay_id}/capture"), json!({})).await,
    );
    c.check("get", "/payments", &get("/v2/payments".into()).await);
    c.check(
        "get",
        "/payments",
        &get(format!(
            "/v2/payments?customer={cus_id}&status=succeeded&created[gte]=0"
        ))
        .await,
    );
    c.check(
        "get",
        "/payments",
        &get("/v2/payments?limit=1000".into()).await,
    );
    c.check(
        "get",
        "/payments",
        &get("/v2/payments?colour=red".into()).await,
    );
    c.check(
        "post",
        "/payments",
        &post("/v2/payments".into(), json!({"amount": 1})).await,
    );

    // Refunds.
    let re = post(
        "/v2/refunds".into(),
        json!({"payment": pay_id, "amount": 100, "reason": "duplicate", "metadata": {"a": "b"}}),
    )
    .await;
    c.check("post", "/refunds", &re);
    let re_id = re.body["id"].as_str().unwrap().to_string();
    c.check(
        "get",
        "/refunds/{id}",
        &get(format!("/v2/refunds/{re_id}")).await,
    );
    c.check(
        "post",
        "/refunds/{id}",
        &post(
            format!("/v2/refunds/{re_id}"),
            json!({"metadata": {"a": "c"}}),
        )
        .await,
    );
    c.check(
        "get",
        "/refunds",
        &get(format!("/v2/refunds?payment={pay_id}")).await,
    );
    c.check(
        "post",
        "/refunds",
        &post(
            "/v2/refunds".into(),
            json!({"payment": pay_id, "amount": 100_000}),
        )
        .await,
    );
    c.check(
        "get",
        "/payments/{id}",
        &get(format!("/v2/payments/{pay_id}")).await,
    );

    // Payment methods.
    let pm = post(
        "/v2/payment_methods".into(),
        json!({"type": "card", "card": {"number": "4000056655665556", "exp_month": 1,
               "exp_year": 2039, "cvc": "999"}, "metadata": {"x": "y"}}),
    )
    .await;
    c.check("post", "/payment_methods", &pm);
    let pm_id = pm.body["id"].as_str().unwrap().to_string();
    let pk = app.account.keys.test.publishable.clone();
    let by_pk = call(
        &app,
        Method::POST,
        "/v2/payment_methods",
        Some(&pk),
        Some(json!({"type": "card", "card": {"number": "4242424242424242", "exp_month": 1, "exp_year": 2039, "cvc": "999"}})),
    )
    .await;
    c.check("post", "/payment_methods", &by_pk);
    c.check(
        "get",
        "/payment_methods/{id}",
        &call(
            &app,
            Method::GET,
            &format!("/v2/payment_methods/{pm_id}"),
            Some(&pk),
            None,
        )
        .await,
    );
    c.check(
        "get",
        "/payment_methods/{id}",
        &get(format!("/v2/payment_methods/{pm_id}")).await,
    );
    c.check(
        "post",
        "/payment_methods/{id}/attach",
        &post(
            format!("/v2/payment_methods/{pm_id}/attach"),
            json!({"customer": cus_id}),
        )
        .await,
    );
    c.check(
        "get",
        "/payment_methods",
        &get(format!("/v2/payment_methods?customer={cus_id}&type=card")).await,
    );
    c.check(
        "get",
        "/payment_methods",
        &get("/v2/payment_methods".into()).await,
    );
    let recurring = post(
        "/v2/payments".into(),
        json!({"amount": 700, "currency": "usd", "payment_method": pm_id, "customer": cus_id}),
    )
    .await;
    assert_eq!(recurring.status, StatusCode::OK, "{}", recurring.body);
    c.check("post", "/payments", &recurring);
    c.check(
        "post",
        "/payment_methods/{id}/detach",
        &post(format!("/v2/payment_methods/{pm_id}/detach"), json!({})).await,
    );

    // Webhook endpoints and deliveries (to a closed local port: attempts fail, recorded).
    let we = post(
        "/v2/webhook_endpoints".into(),
        json!({"url": "http://127.0.0.1:9/hooks", "enabled_events": ["*"], "description": "d"}),
    )
    .await;
    c.check("post", "/webhook_endpoints", &we);
    let we_id = we.body["id"].as_str().unwrap().to_string();
    c.check(
        "get",
        "/webhook_endpoints/{id}",
        &get(format!("/v2/webhook_endpoints/{we_id}")).await,
    );
    c.check(
        "post",
        "/webhook_endpoints/{id}",
        &post(
            format!("/v2/webhook_endpoints/{we_id}"),
            json!({"enabled_events": ["payment.succeeded", "customer.deleted"], "disabled": false}),
        )
        .await,
    );
    c.check(
        "post",
        "/webhook_endpoints/{id}/roll_secret",
        &post(
            format!("/v2/webhook_endpoints/{we_id}/roll_secret"),
            json!({"expires_in": 60}),
        )
        .await,
    );
    c.check(
        "post",
        "/webhook_endpoints/{id}/roll_secret",
        &post(
            format!("/v2/webhook_endpoints/{we_id}/roll_secret"),
            json!({"expires_in": -1}),
        )
        .await,
    );
    c.check(
        "get",
        "/webhook_endpoints",
        &get("/v2/webhook_endpoints".into()).await,
    );
    c.check(
        "post",
        "/webhook_endpoints",
        &post(
            "/v2/webhook_endpoints".into(),
            json!({"url": "ftp://x", "enabled_events": ["*"]}),
        )
        .await,
    );

    // Events: one of each kind we can cause.
    let deleted = call(
        &app,
        Method::DELETE,
        &format!("/v2/customers/{cus_id}"),
        k,
        None,
    )
    .await;
    c.check("delete", "/customers/{id}", &deleted);
    let events = get("/v2/events?limit=100".into()).await;
    c.check("get", "/events", &events);
    let types: BTreeSet<&str> = events.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["type"].as_str())
        .collect();
    for t in [
        "payment.succeeded",
        "payment.failed",
        "payment.canceled",
        "payment.updated",
        "refund.created",
        "customer.created",
        "customer.updated",
        "customer.deleted",
    ] {
        assert!(types.contains(t), "no {t} event among {types:?}");
    }
    c.check(
        "get",
        "/events",
        &get("/v2/events?type=refund.created".into()).await,
    );
    c.check(
        "get",
        "/events",
        &get("/v2/events?type=nonsense".into()).await,
    );
    let evt_id = events.body["data"][0]["id"].as_str().unwrap().to_string();
    c.check(
        "get",
        "/events/{id}",
        &get(format!("/v2/events/{evt_id}")).await,
    );
    // Wait for the worker's first attempt at the event, so attempts are checked too.
    let mut deliveries = get(format!("/v2/events/{evt_id}/deliveries")).await;
    for _ in 0..100 {
        if deliveries.body["data"][0]["attempts"]
            .as_array()
            .is_some_and(|a| !a.is_empty())
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
        deliveries = get(format!("/v2/events/{evt_id}/deliveries")).await;
    }
    assert!(
        deliveries.body["data"][0]["attempts"][0].is_object(),
        "no delivery attempt recorded: {}",
        deliveries.body
    );
    c.check("get", "/events/{id}/deliveries", &deliveries);
    c.check(
        "post",
        "/events/{id}/resend",
        &post(
            format!("/v2/events/{evt_id}/resend"),
            json!({"webhook_endpoint": we_id}),
        )
        .await,
    );
    c.check(
        "post",
        "/events/{id}/resend",
        &post(format!("/v2/events/{evt_id}/resend"), json!({})).await,
    );
    c.check(
        "delete",
        "/webhook_endpoints/{id}",
        &call(
            &app,
            Method::DELETE,
            &format!("/v2/webhook_endpoints/{we_id}"),
            k,
            None,
        )
        .await,
    );

    // Errors common to every operation.
    c.check(
        "get",
        "/customers/{id}",
        &get(format!("/v2/customers/{cus_id}")).await,
    );
    c.check(
        "get",
        "/payments",
        &call(&app, Method::GET, "/v2/payments", None, None).await,
    );
    c.check(
        "get",
        "/payments",
        &call(
            &app,
            Method::GET,
            "/v2/payments",
            Some("sk_test_wrong"),
            None,
        )
        .await,
    );
    c.check(
        "get",
        "/payments",
        &call(&app, Method::GET, "/v2/payments", Some(&pk), None).await,
    );
    let too_big = reqwest::Client::new()
        .post(format!("{}/v2/customers", app.base))
        .bearer_auth(&key)
        .header("content-type", "application/json")
        .body(vec![b' '; 70 * 1024])
        .send()
        .await
        .unwrap();
    let status = too_big.status();
    let headers = too_big.headers().clone();
    let body = too_big.json().await.unwrap();
    c.check(
        "post",
        "/customers",
        &Reply {
            status,
            headers,
            body,
        },
    );
    let text = reqwest::Client::new()
        .post(format!("{}/v2/customers", app.base))
        .bearer_auth(&key)
        .header("content-type", "text/plain")
        .body("name=x")
        .send()
        .await
        .unwrap();
    let status = text.status();
    let headers = text.headers().clone();
    let body = text.json().await.unwrap();
    c.check(
        "post",
        "/customers",
        &Reply {
            status,
            headers,
            body,
        },
    );
    let version = reqwest::Client::new()
        .get(format!("{}/v2/refunds", app.base))
        .bearer_auth(&key)
        .header("tender-version", "1999-01-01")
        .send()
        .await
        .unwrap();
    let status = version.status();
    let headers = version.headers().clone();
    let body = version.json().await.unwrap();
    c.check(
        "get",
        "/refunds",
        &Reply {
            status,
            headers,
            body,
        },
    );

    // Setup intents: saved, declined, canceled, listed.
    let cus_id = post("/v2/customers".into(), json!({})).await.body["id"]
        .as_str()
        .unwrap()
        .to_string();
    let pm = |number: &'static str| {
        let post = &post;
        async move {
            let pm = post(
                "/v2/payment_methods".into(),
                json!({"type": "card", "card": card(number)["card"]}),
            )
            .await;
            pm.body["id"].as_str().unwrap().to_string()
        }
    };
    let saved = post(
        "/v2/setup_intents".into(),
        json!({"customer": cus_id, "payment_method": pm("4242424242424242").await,
               "confirm": true, "usage": "on_session", "metadata": {"k": "v"}}),
    )
    .await;
    assert_eq!(saved.status, StatusCode::OK, "{}", saved.body);
    c.check("post", "/setup_intents", &saved);
    let open = post("/v2/setup_intents".into(), json!({"customer": cus_id})).await;
    c.check("post", "/setup_intents", &open);
    let open_id = open.body["id"].as_str().unwrap().to_string();
    let declined = post(
        format!("/v2/setup_intents/{open_id}/confirm"),
        json!({"payment_method": pm("4000000000000002").await}),
    )
    .await;
    assert_eq!(
        declined.status,
        StatusCode::PAYMENT_REQUIRED,
        "{}",
        declined.body
    );
    c.check("post", "/setup_intents/{id}/confirm", &declined);
    c.check(
        "get",
        "/setup_intents/{id}",
        &get(format!("/v2/setup_intents/{open_id}")).await,
    );
    c.check(
        "post",
        "/setup_intents/{id}/cancel",
        &post(
            format!("/v2/setup_intents/{open_id}/cancel"),
            json!({"cancellation_reason": "abandoned"}),
        )
        .await,
    );
    c.check(
        "get",
        "/setup_intents",
        &get(format!("/v2/setup_intents?customer={cus_id}")).await,
    );

    assert!(c.checked >= 60, "only {} replies checked", c.checked);
}

#[tokio::test]
async fn a_method_the_path_does_not_serve_is_405_whatever_the_idempotency_key() {
    let app = spawn_app().await;
    let send = |method: Method, path: &'static str, key: &'static str| {
        let app = &app;
        async move {
            reqwest::Client::new()
                .request(method, format!("{}{path}", app.base))
                .bearer_auth(sk(app))
                .header("idempotency-key", key)
                .json(&json!({}))
                .send()
                .await
                .unwrap()
        }
    };
    // A fresh key: 405 each time, never kept and replayed (a replay had an empty body).
    for _ in 0..2 {
        let r = send(Method::POST, "/v2/events", "k-405").await;
        assert_eq!(r.status(), StatusCode::METHOD_NOT_ALLOWED);
        assert!(r.headers().get("idempotent-replayed").is_none());
        let body: Value = r.json().await.unwrap();
        assert_eq!(body["error"]["code"], "method_not_allowed");
    }
    // A key already used for another request: still 405, not 400 idempotency_error.
    let r = send(Method::POST, "/v2/customers", "k-used").await;
    assert_eq!(r.status(), StatusCode::OK);
    let r = send(Method::PATCH, "/v2/customers", "k-used").await;
    assert_eq!(r.status(), StatusCode::METHOD_NOT_ALLOWED);
    // And the key still replays what it was used for.
    let r = send(Method::POST, "/v2/customers", "k-used").await;
    assert_eq!(r.status(), StatusCode::OK);
    assert_eq!(r.headers()["idempotent-replayed"], "true");
}
