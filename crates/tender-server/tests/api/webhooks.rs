//! Webhooks: endpoint management, signed delivery to a real receiver, retries, disabling,
//! the attempt log, resend, secret rolls, mode isolation and the live-mode URL rules.

use std::time::Duration;

use serde_json::json;

use crate::helpers::*;
use crate::receiver::{verify_standard_signature, verify_tender_signature, Receiver, Reply};

const WAIT: Duration = Duration::from_secs(10);

async fn endpoint(app: &TestApp, key: &str, url: &str, events: serde_json::Value) -> Answer {
    app.post(
        "/v2/webhook_endpoints",
        key,
        json!({"url": url, "enabled_events": events}),
    )
    .await
}

#[tokio::test]
async fn the_secret_is_shown_only_at_creation() {
    let Some(app) = spawn_app().await else { return };
    let a = endpoint(&app, app.sk(), "http://127.0.0.1:9/hook", json!(["*"])).await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.body["object"], "webhook_endpoint");
    assert_eq!(a.body["status"], "enabled");
    assert_eq!(a.body["livemode"], false);
    let secret = a.body["secret"].as_str().unwrap();
    assert!(secret.starts_with("whsec_"));
    let id = a.id();
    assert!(id.starts_with("we_"));
    let got = app
        .get(&format!("/v2/webhook_endpoints/{id}"), app.sk())
        .await;
    assert_eq!(got.status, 200);
    assert!(got.body.get("secret").is_none());
    let list = app.get("/v2/webhook_endpoints", app.sk()).await;
    assert_eq!(list.body["data"][0]["id"], id.as_str());
    assert!(list.body["data"][0].get("secret").is_none());
    assert!(
        !contains(&app.stored_bytes().await, secret),
        "the secret is stored in clear"
    );
}

#[tokio::test]
async fn endpoint_validation_refuses_bad_urls_and_event_types() {
    let Some(app) = spawn_app().await else { return };
    let bad = endpoint(&app, app.sk(), "ftp://example.com/x", json!(["*"])).await;
    assert_eq!(
        (bad.status.as_u16(), bad.error_code()),
        (400, "url_invalid")
    );
    let bad = endpoint(&app, app.sk(), "not a url", json!(["*"])).await;
    assert_eq!(bad.error_code(), "url_invalid");
    let bad = endpoint(
        &app,
        app.sk(),
        "http://127.0.0.1/x",
        json!(["payment.exploded"]),
    )
    .await;
    assert_eq!(
        (bad.error_code(), bad.error_param()),
        ("parameter_invalid", "enabled_events")
    );
    let bad = endpoint(&app, app.sk(), "http://127.0.0.1/x", json!([])).await;
    assert_eq!(bad.error_param(), "enabled_events");
    let bad = app
        .post(
            "/v2/webhook_endpoints",
            app.sk(),
            json!({"enabled_events": ["*"]}),
        )
        .await;
    assert_eq!(
        (bad.error_code(), bad.error_param()),
        ("parameter_missing", "url")
    );
}

#[tokio::test]
async fn live_mode_urls_must_be_https_and_public() {
    let Some(app) = spawn_app().await else { return };
    for url in [
        "http://example.com/hook",
        "https://127.0.0.1/hook",
        "https://localhost/hook",
        "https://10.1.2.3/hook",
        "https://192.168.0.10/hook",
        "https://169.254.169.254/latest",
        "https://[::1]/hook",
        "https://[::ffff:127.0.0.1]/hook",
        "https://224.0.0.1/hook",
    ] {
        let a = endpoint(&app, app.sk_live(), url, json!(["*"])).await;
        assert_eq!(
            (a.status.as_u16(), a.error_code()),
            (400, "url_invalid"),
            "{url}"
        );
    }
    // Test mode allows http and localhost for local development.
    assert_eq!(
        endpoint(&app, app.sk(), "http://localhost:1/hook", json!(["*"]))
            .await
            .status,
        200
    );
}

#[tokio::test]
async fn an_event_is_delivered_signed_in_both_schemes() {
    let Some(app) = spawn_stepped_app().await else {
        return;
    };
    let rx = Receiver::start().await;
    let ep = endpoint(&app, app.sk(), &rx.url, json!(["payment.succeeded"])).await;
    let secret = ep.body["secret"].as_str().unwrap().to_string();
    let pay = app.pay(app.sk(), "4242424242424242", 1500).await;
    app.post("/v2/customers", app.sk(), json!({})).await; // not subscribed
    assert_eq!(
        app.deliver_pending().await,
        1,
        "customer.created is not sent to a payment-only endpoint"
    );
    let got = rx.received();
    assert_eq!(got.len(), 1);
    let hit = &got[0];
    let event = hit.json();
    assert_eq!(event["type"], "payment.succeeded");
    assert_eq!(event["data"]["object"]["id"], pay.id().as_str());
    assert_eq!(hit.header("content-type"), "application/json");
    assert!(hit.header("user-agent").starts_with("Tender-Webhooks/"));
    assert!(verify_tender_signature(
        hit.header("tender-signature"),
        &hit.body,
        &secret
    ));
    assert!(!verify_tender_signature(
        hit.header("tender-signature"),
        b"{}",
        &secret
    ));
    assert_eq!(hit.header("webhook-id"), event["id"].as_str().unwrap());
    assert!(verify_standard_signature(
        hit.header("webhook-id"),
        hit.header("webhook-timestamp"),
        hit.header("webhook-signature"),
        &hit.body,
        &secret
    ));
    let log = app
        .get(
            &format!("/v2/events/{}/deliveries", event["id"].as_str().unwrap()),
            app.sk(),
        )
        .await;
    let d = &log.body["data"][0];
    assert!(d["id"].as_str().unwrap().starts_with("wd_"));
    assert_eq!(d["object"], "webhook_delivery");
    assert_eq!(d["status"], "succeeded");
    assert_eq!(d["webhook_endpoint"], ep.id().as_str());
    assert_eq!(d["attempts"][0]["response_status"], 200);
    assert_eq!(d["attempts"][0]["response_body"], r#"{"received": true}"#);
}

#[tokio::test]
async fn failures_are_retried_until_the_receiver_accepts() {
    let Some(app) = spawn_app().await else { return };
    let rx = Receiver::start().await;
    rx.script([
        Reply::status(500),
        Reply::status(502),
        Reply {
            status: 302,
            delay: Duration::ZERO,
            headers: vec![("location", "http://127.0.0.1:1/".into())],
        },
    ]);
    endpoint(&app, app.sk(), &rx.url, json!(["*"])).await;
    let c = app
        .post("/v2/customers", app.sk(), json!({"name": "Retry"}))
        .await;
    let got = rx.wait_for(4, Duration::from_secs(20)).await;
    assert_eq!(got.len(), 4, "three failures then a success");
    let ids: std::collections::HashSet<_> = got
        .iter()
        .map(|r| r.json()["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ids.len(), 1, "the same event each time");
    assert_eq!(got[0].json()["data"]["object"]["id"], c.id().as_str());
    let event = got[0].json()["id"].as_str().unwrap().to_string();
    let log = wait_for_status(&app, &event, "succeeded").await;
    let statuses: Vec<_> = log["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["response_status"].clone())
        .collect();
    assert_eq!(
        statuses,
        vec![json!(500), json!(502), json!(302), json!(200)]
    );
    assert!(log["attempts"][2]["error"]
        .as_str()
        .unwrap()
        .contains("redirect"));
}

#[tokio::test]
async fn refused_connections_are_retried_and_delivered_once_the_receiver_is_up() {
    let Some(app) = spawn_app().await else { return };
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    endpoint(
        &app,
        app.sk(),
        &format!("http://{addr}/hook"),
        json!(["customer.created"]),
    )
    .await;
    app.post("/v2/customers", app.sk(), json!({})).await;
    let events = app.get("/v2/events", app.sk()).await;
    let event = events.body["data"][0]["id"].as_str().unwrap().to_string();
    // Wait for at least one failed attempt, then bring the receiver up on that port.
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let log = app
            .get(&format!("/v2/events/{event}/deliveries"), app.sk())
            .await;
        if !log.body["data"][0]["attempts"]
            .as_array()
            .unwrap()
            .is_empty()
        {
            let a = &log.body["data"][0]["attempts"][0];
            assert_eq!(a["response_status"], serde_json::Value::Null);
            assert!(a["error"].as_str().unwrap().contains("connect"), "{a}");
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no attempt was made"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let rx = Receiver::start_on(tokio::net::TcpListener::bind(addr).await.unwrap()).await;
    let got = rx.wait_for(1, Duration::from_secs(20)).await;
    assert_eq!(got.len(), 1);
    wait_for_status(&app, &event, "succeeded").await;
}

#[tokio::test]
async fn a_receiver_that_times_out_is_retried() {
    let Some(app) = spawn_app().await else { return };
    let rx = Receiver::start().await;
    rx.script([Reply {
        status: 200,
        delay: Duration::from_secs(11),
        headers: vec![],
    }]);
    endpoint(&app, app.sk(), &rx.url, json!(["customer.created"])).await;
    app.post("/v2/customers", app.sk(), json!({})).await;
    let got = rx.wait_for(2, Duration::from_secs(30)).await;
    assert_eq!(got.len(), 2);
    let event = got[0].json()["id"].as_str().unwrap().to_string();
    let log = wait_for_status(&app, &event, "succeeded").await;
    assert_eq!(
        log["attempts"][0]["response_status"],
        serde_json::Value::Null
    );
    assert!(log["attempts"][0]["error"]
        .as_str()
        .unwrap()
        .contains("timed out"));
}

#[tokio::test]
async fn gone_disables_the_endpoint_and_retry_after_is_honoured() {
    let Some(app) = spawn_stepped_app().await else {
        return;
    };
    let gone = Receiver::start().await;
    gone.script([Reply::status(410)]);
    let ep = endpoint(&app, app.sk(), &gone.url, json!(["customer.created"]))
        .await
        .id();
    app.post("/v2/customers", app.sk(), json!({})).await;
    assert_eq!(app.deliver_pending().await, 1);
    assert_eq!(gone.received().len(), 1);
    let e = app
        .get(&format!("/v2/webhook_endpoints/{ep}"), app.sk())
        .await;
    assert_eq!(e.body["status"], "disabled", "410 disables the endpoint");
    app.post("/v2/customers", app.sk(), json!({})).await;
    app.deliver_pending().await;
    assert_eq!(
        gone.received().len(),
        1,
        "a disabled endpoint receives nothing"
    );

    // Retry-After in real time: a running worker must wait it out.
    let Some(app) = spawn_app().await else { return };
    let slow = Receiver::start().await;
    slow.script([Reply {
        status: 429,
        delay: Duration::ZERO,
        headers: vec![("retry-after", "2".into())],
    }]);
    endpoint(&app, app.sk(), &slow.url, json!(["customer.created"])).await;
    app.post("/v2/customers", app.sk(), json!({})).await;
    let got = slow.wait_for(2, WAIT).await;
    assert_eq!(got.len(), 2);
    let gap = got[1].at.duration_since(got[0].at);
    assert!(
        gap >= Duration::from_millis(1900),
        "Retry-After: 2 was not honoured ({gap:?})"
    );
}

#[tokio::test]
async fn resend_schedules_the_delivery_again() {
    let Some(app) = spawn_app().await else { return };
    let rx = Receiver::start().await;
    let ep = endpoint(&app, app.sk(), &rx.url, json!(["customer.created"]))
        .await
        .id();
    app.post("/v2/customers", app.sk(), json!({})).await;
    let first = rx.wait_for(1, WAIT).await;
    let event = first[0].json()["id"].as_str().unwrap().to_string();
    wait_for_status(&app, &event, "succeeded").await;
    let r = app
        .post(
            &format!("/v2/events/{event}/resend"),
            app.sk(),
            json!({"webhook_endpoint": ep}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["status"], "pending");
    let got = rx.wait_for(2, WAIT).await;
    assert_eq!(got.len(), 2);
    assert_eq!(got[1].json()["id"], event.as_str());
    let bad = app
        .post(
            &format!("/v2/events/{event}/resend"),
            app.sk(),
            json!({"webhook_endpoint": "we_missing000000000000000000"}),
        )
        .await;
    assert_eq!(
        (bad.status.as_u16(), bad.error_code()),
        (400, "resource_missing")
    );
    let missing = app
        .get(
            "/v2/events/evt_missing0000000000000000/deliveries",
            app.sk(),
        )
        .await;
    assert_eq!(missing.status, 404);
}

#[tokio::test]
async fn a_rolled_secret_signs_alongside_the_new_one_during_the_grace_period() {
    let Some(app) = spawn_app().await else { return };
    let rx = Receiver::start().await;
    let ep = endpoint(&app, app.sk(), &rx.url, json!(["customer.created"])).await;
    let old = ep.body["secret"].as_str().unwrap().to_string();
    let rolled = app
        .post(
            &format!("/v2/webhook_endpoints/{}/roll_secret", ep.id()),
            app.sk(),
            json!({"expires_in": 3600}),
        )
        .await;
    assert_eq!(rolled.status, 200, "{}", rolled.body);
    let new = rolled.body["secret"].as_str().unwrap().to_string();
    assert_ne!(old, new);
    app.post("/v2/customers", app.sk(), json!({})).await;
    let got = rx.wait_for(1, WAIT).await;
    let sig = got[0].header("tender-signature");
    assert_eq!(sig.matches("v1=").count(), 2);
    assert!(verify_tender_signature(sig, &got[0].body, &old));
    assert!(verify_tender_signature(sig, &got[0].body, &new));
    assert_eq!(got[0].header("webhook-signature").split(' ').count(), 2);
    // After the grace period only the new secret signs.
    app.clock.advance(3601);
    app.post("/v2/customers", app.sk(), json!({})).await;
    let got = rx.wait_for(2, WAIT).await;
    let sig = got[1].header("tender-signature");
    assert_eq!(sig.matches("v1=").count(), 1);
    assert!(verify_tender_signature(sig, &got[1].body, &new));
    assert!(!verify_tender_signature(sig, &got[1].body, &old));
    let bad = app
        .post(
            &format!("/v2/webhook_endpoints/{}/roll_secret", ep.id()),
            app.sk(),
            json!({"expires_in": 604801}),
        )
        .await;
    assert_eq!(
        (bad.error_code(), bad.error_param()),
        ("parameter_invalid", "expires_in")
    );
}

#[tokio::test]
async fn endpoints_receive_only_their_own_account_and_mode() {
    let Some(app) = spawn_stepped_app().await else {
        return;
    };
    let other = app.other_account().await;
    let rx = Receiver::start().await;
    endpoint(&app, app.sk(), &rx.url, json!(["*"])).await;
    app.post("/v2/customers", app.sk_live(), json!({})).await;
    app.post("/v2/customers", &other.keys.test.secret, json!({}))
        .await;
    let mine = app.post("/v2/customers", app.sk(), json!({})).await;
    app.deliver_pending().await;
    let got = rx.received();
    let got_all = &got;
    assert_eq!(
        got_all.len(),
        1,
        "{:?}",
        got.iter().map(|r| r.json()).collect::<Vec<_>>()
    );
    assert_eq!(
        got_all[0].json()["data"]["object"]["id"],
        mine.id().as_str()
    );
    let ep_other = app
        .get("/v2/webhook_endpoints", &other.keys.test.secret)
        .await;
    assert_eq!(ep_other.body["data"].as_array().unwrap().len(), 0);
}

#[tokio::test]
async fn updating_and_deleting_an_endpoint() {
    let Some(app) = spawn_app().await else { return };
    let rx = Receiver::start().await;
    let id = endpoint(
        &app,
        app.sk(),
        "http://127.0.0.1:9/old",
        json!(["customer.created"]),
    )
    .await
    .id();
    let u = app
        .post(
            &format!("/v2/webhook_endpoints/{id}"),
            app.sk(),
            json!({"url": rx.url, "enabled_events": ["*"], "description": "main"}),
        )
        .await;
    assert_eq!(u.status, 200, "{}", u.body);
    assert_eq!(u.body["url"], rx.url.as_str());
    assert_eq!(u.body["description"], "main");
    let d = app
        .post(
            &format!("/v2/webhook_endpoints/{id}"),
            app.sk(),
            json!({"disabled": true}),
        )
        .await;
    assert_eq!(d.body["status"], "disabled");
    app.post("/v2/customers", app.sk(), json!({})).await;
    let d = app
        .post(
            &format!("/v2/webhook_endpoints/{id}"),
            app.sk(),
            json!({"disabled": false}),
        )
        .await;
    assert_eq!(d.body["status"], "enabled");
    app.pay(app.sk(), "4242424242424242", 1000).await;
    let got = rx.wait_for(2, WAIT).await;
    let mut types: Vec<serde_json::Value> = got.iter().map(|d| d.json()["type"].clone()).collect();
    types.sort_by_key(|t| t.to_string());
    assert_eq!(types, ["payment.created", "payment.succeeded"]);
    let del = app
        .delete(&format!("/v2/webhook_endpoints/{id}"), app.sk())
        .await;
    assert_eq!(
        del.body,
        json!({"id": id, "object": "webhook_endpoint", "deleted": true})
    );
    assert_eq!(
        app.get(&format!("/v2/webhook_endpoints/{id}"), app.sk())
            .await
            .status,
        404
    );
}

async fn wait_for_status(app: &TestApp, event: &str, status: &str) -> serde_json::Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let log = app
            .get(&format!("/v2/events/{event}/deliveries"), app.sk())
            .await;
        let d = log.body["data"][0].clone();
        if d["status"] == status {
            return d;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "delivery never reached {status}: {d}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
