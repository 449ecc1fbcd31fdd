//! What the November security review found (`docs/reliability.md`, "Security review"): each
//! test fails on the code the review tried and passes on the fix.

use reqwest::{Method, StatusCode};
use serde_json::json;
use tender_core::auth::{KeyKind, Mode};

use crate::helpers::*;

/// M1: a key that expired after a roll stays dead, and rolling a key already in its grace
/// period never moves its end later.
#[tokio::test]
async fn rolling_never_revives_an_expired_key_nor_extends_a_grace_period() {
    let Some(app) = spawn_app().await else { return };
    let account = &app.account.account;
    let (key, record) = app
        .services
        .accounts()
        .create_api_key(account, Mode::Test, KeyKind::Secret)
        .await
        .unwrap();
    app.services
        .accounts()
        .roll_api_key(account, &record.id, 100)
        .await
        .unwrap();
    let first_end = app.services.now() + 100;
    // A second roll asking for 7 days keeps the first end.
    app.services
        .accounts()
        .roll_api_key(account, &record.id, 604_800)
        .await
        .unwrap();
    let stored = app
        .services
        .store
        .list_api_keys(account)
        .await
        .unwrap()
        .into_iter()
        .find(|k| k.id == record.id)
        .unwrap();
    assert!(
        stored.expires_at.unwrap() <= first_end,
        "grace extended to {:?}",
        stored.expires_at
    );
    assert_eq!(app.get("/v2/payments", &key).await.status, StatusCode::OK);

    app.clock.advance(101);
    assert_eq!(
        app.get("/v2/payments", &key).await.status,
        StatusCode::UNAUTHORIZED
    );
    let refused = app
        .services
        .accounts()
        .roll_api_key(account, &record.id, 604_800)
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("expired"), "{refused}");
    assert_eq!(
        app.get("/v2/payments", &key).await.status,
        StatusCode::UNAUTHORIZED
    );
}

/// M2: made-up HTTP methods, sent without a key, do not add series to `/metrics`.
#[tokio::test]
async fn made_up_methods_do_not_grow_metrics() {
    let Some(app) = spawn_app().await else { return };
    for i in 0..30 {
        let method = Method::from_bytes(format!("ZZMETHOD{i}").as_bytes()).unwrap();
        let resp = app
            .client
            .request(method, format!("{}/healthz", app.base))
            .send()
            .await
            .unwrap();
        assert!(resp.status().is_client_error());
    }
    let metrics = app
        .client
        .get(format!("{}/metrics", app.base))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(!metrics.contains("ZZMETHOD"), "a made-up method is a label");
    assert!(metrics.contains("method=\"other\""), "{metrics}");
}

/// H1: what an idempotency record keeps is a keyed digest that never covers the CVC: a replay
/// with another CVC answers exactly as a replay does (no oracle), and neither the card number
/// nor the CVC can be recomputed from the stored fingerprint without the vault key.
#[tokio::test]
async fn a_replay_with_another_cvc_is_a_replay_and_no_plain_digest_of_the_card_is_stored() {
    let Some(app) = spawn_app().await else { return };
    let body = |cvc: &str| {
        json!({"amount": 7331, "currency": "usd", "description": "order 5521",
               "payment_method": {"type": "card", "card": {"number": "4000056655665556",
               "exp_month": 11, "exp_year": 2032, "cvc": cvc}}})
    };
    let key = [("Idempotency-Key", "order-5521")];
    let first = app
        .request(
            Method::POST,
            "/v2/payments",
            Some(app.sk()),
            Some(body("719")),
            &key,
        )
        .await;
    assert_eq!(first.status, StatusCode::OK);
    let other_cvc = app
        .request(
            Method::POST,
            "/v2/payments",
            Some(app.sk()),
            Some(body("718")),
            &key,
        )
        .await;
    assert_eq!(other_cvc.status, StatusCode::OK);
    assert_eq!(other_cvc.header("idempotent-replayed"), Some("true"));
    assert_eq!(other_cvc.raw, first.raw);
    // Another card number is another request.
    let mut other_card = body("719");
    other_card["payment_method"]["card"]["number"] = json!("4242424242424242");
    let mismatch = app
        .request(
            Method::POST,
            "/v2/payments",
            Some(app.sk()),
            Some(other_card),
            &key,
        )
        .await;
    assert_eq!(mismatch.status, StatusCode::BAD_REQUEST);

    // The review's attack: SHA-256 of the method, path and canonical body, with the real card.
    let stored = app.stored_bytes().await;
    for canonical in [
        r#"POST /v2/payments
{"amount":7331,"currency":"usd","description":"order 5521","payment_method":{"card":{"cvc":"719","exp_month":11,"exp_year":2032,"number":"4000056655665556"},"type":"card"}}"#,
        r#"POST /payments
{"amount":7331,"currency":"usd","description":"order 5521","payment_method":{"card":{"cvc":"719","exp_month":11,"exp_year":2032,"number":"4000056655665556"},"type":"card"}}"#,
    ] {
        use sha2::Digest;
        let digest = hex::encode(sha2::Sha256::digest(canonical.as_bytes()));
        assert!(
            !contains(&stored, &digest),
            "a plain digest of the card is stored"
        );
    }
}

/// L2: a publishable key (public, in the merchant's pages) cannot claim the idempotency key
/// the merchant's server will use.
#[tokio::test]
async fn a_publishable_key_cannot_pre_claim_the_merchants_idempotency_keys() {
    let Some(app) = spawn_app().await else { return };
    let key = [("Idempotency-Key", "order-1001")];
    let tokenised = app
        .request(
            Method::POST,
            "/v2/payment_methods",
            Some(app.pk()),
            Some(card("4242424242424242")),
            &key,
        )
        .await;
    assert_eq!(tokenised.status, StatusCode::OK);
    let paid = app
        .request(
            Method::POST,
            "/v2/payments",
            Some(app.sk()),
            Some(payment_body("4242424242424242", 1000)),
            &key,
        )
        .await;
    assert_eq!(paid.status, StatusCode::OK, "{}", paid.body);
    assert_eq!(paid.body["object"], "payment");
}

/// L1: a webhook signing secret in a response kept for replays is sealed like other secrets;
/// the replay still shows it.
#[tokio::test]
async fn webhook_secrets_in_idempotent_responses_are_sealed_at_rest() {
    let Some(app) = spawn_app().await else { return };
    let key = [("Idempotency-Key", "we-create-1")];
    let body = json!({"url": "http://127.0.0.1:9/hook", "enabled_events": ["*"]});
    let created = app
        .request(
            Method::POST,
            "/v2/webhook_endpoints",
            Some(app.sk()),
            Some(body.clone()),
            &key,
        )
        .await;
    assert_eq!(created.status, StatusCode::OK);
    let secret = created.body["secret"].as_str().unwrap().to_string();
    assert!(secret.starts_with("whsec_"));
    assert!(
        !contains(&app.stored_bytes().await, &secret),
        "the signing secret is stored in clear"
    );
    let replay = app
        .request(
            Method::POST,
            "/v2/webhook_endpoints",
            Some(app.sk()),
            Some(body),
            &key,
        )
        .await;
    assert_eq!(replay.header("idempotent-replayed"), Some("true"));
    assert_eq!(replay.raw, created.raw);
}

/// M5: one account's endpoints that accept connections and never answer (each attempt holds
/// its slot for the full 10 s timeout) do not delay another account's webhooks: before the fix
/// the other account's delivery waited behind them for 20 s and more.
#[tokio::test]
async fn slow_endpoints_of_one_account_do_not_hold_up_another_accounts_webhooks() {
    let Some(app) = spawn_app().await else { return };
    let hole = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let hole_addr = hole.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((socket, _)) = hole.accept().await {
            held.push(socket);
        }
    });
    let b = app.other_account().await;
    let bk = &b.keys.test.secret;
    for i in 0..16 {
        let e = app
            .post(
                "/v2/webhook_endpoints",
                bk,
                json!({"url": format!("http://{hole_addr}/{i}"), "enabled_events": ["*"]}),
            )
            .await;
        assert_eq!(e.status, StatusCode::OK, "{}", e.body);
    }
    let seventeenth = app
        .post(
            "/v2/webhook_endpoints",
            bk,
            json!({"url": format!("http://{hole_addr}/16"), "enabled_events": ["*"]}),
        )
        .await;
    assert_eq!(seventeenth.status, StatusCode::BAD_REQUEST);
    assert_eq!(seventeenth.error_code(), "webhook_endpoints_limit");
    for _ in 0..8 {
        app.post("/v2/customers", bk, json!({})).await;
    }

    let rx = crate::receiver::Receiver::start().await;
    let e = app
        .post(
            "/v2/webhook_endpoints",
            app.sk(),
            json!({"url": rx.url, "enabled_events": ["customer.created"]}),
        )
        .await;
    assert_eq!(e.status, StatusCode::OK);
    let started = std::time::Instant::now();
    app.post("/v2/customers", app.sk(), json!({})).await;
    let got = rx.wait_for(1, std::time::Duration::from_secs(5)).await;
    assert_eq!(
        got.len(),
        1,
        "A's webhook waited behind B's black-holed endpoints for {:?}",
        started.elapsed()
    );
}

/// M6: test-mode endpoints may point at loopback (local development) and public addresses,
/// never at link-local / cloud-metadata addresses, and at private networks only when the
/// operator allows it.
#[tokio::test]
async fn test_mode_webhooks_cannot_reach_metadata_or_private_networks() {
    let Some(app) = spawn_app().await else { return };
    for url in [
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.1:2375/containers/x/kill",
        "http://192.168.1.1/",
        "http://[fe80::1]/",
        "http://[::ffff:169.254.169.254]/",
        "http://0.0.0.0:4242/",
    ] {
        let e = app
            .post(
                "/v2/webhook_endpoints",
                app.sk(),
                json!({"url": url, "enabled_events": ["*"]}),
            )
            .await;
        assert_eq!(e.status, StatusCode::BAD_REQUEST, "{url}: {}", e.body);
        assert_eq!(e.error_code(), "url_invalid", "{url}");
    }
    for url in [
        "http://127.0.0.1:9/x",
        "http://[::1]:9/x",
        "http://localhost:9/x",
    ] {
        let e = app
            .post(
                "/v2/webhook_endpoints",
                app.sk(),
                json!({"url": url, "enabled_events": ["*"]}),
            )
            .await;
        assert_eq!(e.status, StatusCode::OK, "{url}: {}", e.body);
    }
}

#[tokio::test]
async fn the_operator_can_let_test_mode_webhooks_reach_private_networks_but_never_metadata() {
    let Some(app) = spawn_app_with(Options {
        allow_private_webhook_targets: true,
        ..Options::default()
    })
    .await
    else {
        return;
    };
    let create = |url: &'static str| {
        app.post(
            "/v2/webhook_endpoints",
            app.sk(),
            json!({"url": url, "enabled_events": ["*"]}),
        )
    };
    assert_eq!(
        create("http://10.0.0.1:8080/hook").await.status,
        StatusCode::OK
    );
    assert_eq!(create("http://[fd12::1]/hook").await.status, StatusCode::OK);
    assert_eq!(
        create("http://169.254.169.254/").await.status,
        StatusCode::BAD_REQUEST
    );
    // Live mode keeps its own rules.
    let live = app
        .post(
            "/v2/webhook_endpoints",
            app.sk_live(),
            json!({"url": "https://10.0.0.1/hook", "enabled_events": ["*"]}),
        )
        .await;
    assert_eq!(live.status, StatusCode::BAD_REQUEST);
}

/// Writes `request` on a fresh connection and reads until the server closes it or `within`
/// passes; what was read.
async fn raw_exchange(base: &str, request: &[u8], within: std::time::Duration) -> (Vec<u8>, bool) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = base.trim_start_matches("http://");
    let mut socket = tokio::net::TcpStream::connect(addr).await.unwrap();
    socket.write_all(request).await.unwrap();
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = tokio::time::Instant::now() + within;
    loop {
        match tokio::time::timeout_at(deadline, socket.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return (out, true),
            Ok(Ok(n)) => out.extend_from_slice(&buf[..n]),
            Err(_) => return (out, false),
        }
    }
}

/// Item 9: a 413 on a keep-alive connection says `Connection: close`, so the client does not
/// send its next request into a connection the server is closing.
#[tokio::test]
async fn an_over_large_body_is_answered_413_with_connection_close() {
    let Some(app) = spawn_app().await else { return };
    let body = format!(r#"{{"description": "{}"}}"#, "x".repeat(70 * 1024));
    let resp = app
        .client
        .post(format!("{}/v2/customers", app.base))
        .bearer_auth(app.sk())
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(
        resp.headers()
            .get("connection")
            .and_then(|v| v.to_str().ok()),
        Some("close")
    );
    // The pooled client's next request works.
    assert_eq!(
        app.get("/v2/customers", app.sk()).await.status,
        StatusCode::OK
    );
}

/// M3: a body that trickles (or stalls) past the deadline is answered 408 and its connection
/// closed; HTTP/2 with prior knowledge is not served on plain HTTP (its idle connections were
/// never closed).
#[tokio::test]
async fn slow_bodies_are_cut_off_and_plain_http2_is_not_served() {
    let Some(app) = spawn_app_with(Options {
        body_timeout: std::time::Duration::from_millis(500),
        ..Options::default()
    })
    .await
    else {
        return;
    };
    let head = format!(
        "POST /v2/customers HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{{",
        app.sk()
    );
    let (answer, closed) = raw_exchange(
        &app.base,
        head.as_bytes(),
        std::time::Duration::from_secs(5),
    )
    .await;
    let text = String::from_utf8_lossy(&answer);
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    assert!(
        text.to_ascii_lowercase().contains("connection: close"),
        "{text}"
    );
    assert!(closed, "the connection stayed open");

    let (answer, closed) = raw_exchange(
        &app.base,
        b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00",
        std::time::Duration::from_secs(5),
    )
    .await;
    assert!(
        closed,
        "an HTTP/2 prior-knowledge connection was kept open: {:?}",
        String::from_utf8_lossy(&answer)
    );
    // No HTTP/2 SETTINGS frame came back (type 0x04 in the 4th byte of a frame header).
    assert!(
        !(answer.len() >= 9 && answer[3] == 0x04),
        "the server spoke HTTP/2: {answer:?}"
    );
}

/// M3: past the connection cap, new connections wait instead of exhausting the process; the
/// service serves them as soon as a connection closes.
#[tokio::test]
async fn connections_past_the_cap_wait_for_a_free_slot() {
    let Some(app) = spawn_app_with(Options {
        max_connections: 4,
        ..Options::default()
    })
    .await
    else {
        return;
    };
    let addr = app.base.trim_start_matches("http://").to_string();
    let mut held = Vec::new();
    for _ in 0..4 {
        // Each one answered (so accepted), then kept alive and idle.
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut socket = tokio::net::TcpStream::connect(&addr).await.unwrap();
        socket
            .write_all(b"GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n")
            .await
            .unwrap();
        let mut buf = [0u8; 1024];
        let n = socket.read(&mut buf).await.unwrap();
        assert!(buf[..n].starts_with(b"HTTP/1.1 200"));
        held.push(socket);
    }
    let client = reqwest::Client::new();
    let waiting = client
        .get(format!("{}/healthz", app.base))
        .timeout(std::time::Duration::from_millis(500))
        .send()
        .await;
    assert!(
        waiting.is_err(),
        "a fifth connection was served past the cap"
    );
    held.pop();
    let served = client
        .get(format!("{}/healthz", app.base))
        .timeout(std::time::Duration::from_secs(5))
        .send()
        .await
        .unwrap();
    assert_eq!(served.status(), StatusCode::OK);
}

/// T3-L5: one address's idle half-sent requests take at most 32 connections; past that its
/// new connections are closed at once, and another address is served as before.
#[tokio::test]
async fn half_sent_requests_of_one_address_cannot_take_every_connection() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let Some(app) = spawn_app_with(Options {
        max_connections: 64,
        count_loopback_half_open: true,
        ..Options::default()
    })
    .await
    else {
        return;
    };
    let addr: std::net::SocketAddr = app.base.trim_start_matches("http://").parse().unwrap();
    let mut opened = Vec::new();
    for _ in 0..40 {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let mut stream = socket.connect(addr).await.unwrap();
        // A write to a connection the server already closed may fail: it is seen below.
        let _ = stream
            .write_all(b"GET /healthz HTTP/1.1\r\nhost: x\r\n")
            .await;
        opened.push(stream);
    }
    // All at once: each is closed by the server (or reset), or still waits for the rest of
    // its head after a second.
    let outcomes = futures::future::join_all(opened.into_iter().map(|mut stream| async move {
        let mut buf = [0u8; 64];
        match tokio::time::timeout(std::time::Duration::from_secs(1), stream.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => None,
            Ok(Ok(n)) => panic!("a half-sent request was answered: {:?}", &buf[..n]),
            Err(_) => Some(stream),
        }
    }))
    .await;
    let closed = outcomes.iter().filter(|o| o.is_none()).count();
    let mut held: Vec<_> = outcomes.into_iter().flatten().collect();
    assert_eq!(held.len(), 32, "{closed} closed");
    assert_eq!(closed, 8);
    // Another address is served at once, though this one holds 32 connections.
    let other = reqwest::Client::builder()
        .local_address(std::net::IpAddr::from([127, 0, 0, 2]))
        .build()
        .unwrap();
    let served = other
        .get(format!("{}/healthz", app.base))
        .timeout(std::time::Duration::from_secs(2))
        .send()
        .await
        .unwrap();
    assert_eq!(served.status(), StatusCode::OK);
    // A held one that finishes its head is answered, and frees its address's place.
    let mut done = held.pop().unwrap();
    done.write_all(b"\r\n").await.unwrap();
    let mut buf = [0u8; 64];
    let n = done.read(&mut buf).await.unwrap();
    assert!(buf[..n].starts_with(b"HTTP/1.1 200"));
    let again = reqwest::Client::builder()
        .local_address(std::net::IpAddr::from([127, 0, 0, 1]))
        .build()
        .unwrap()
        .get(format!("{}/healthz", app.base))
        .timeout(std::time::Duration::from_secs(2))
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), StatusCode::OK);
}

/// M4: ten charges at once of one single-use payment method: one is authorised and recorded,
/// the others are told the method is used (400), none gets a 500, and only one payment exists.
#[tokio::test]
async fn concurrent_charges_of_one_token_authorise_once_and_the_rest_get_a_clear_400() {
    let Some(app) = spawn_app().await else { return };
    for _ in 0..3 {
        let pm = app
            .post("/v2/payment_methods", app.pk(), card("4242424242424242"))
            .await;
        assert_eq!(pm.status, StatusCode::OK);
        let pm_id = pm.id();
        let charges = (0..10).map(|_| {
            app.post(
                "/v2/payments",
                app.sk(),
                json!({"amount": 1000, "currency": "usd", "payment_method": pm_id}),
            )
        });
        let answers = futures::future::join_all(charges).await;
        let ok = answers
            .iter()
            .filter(|a| a.status == StatusCode::OK)
            .count();
        assert_eq!(
            ok,
            1,
            "{:?}",
            answers.iter().map(|a| a.status).collect::<Vec<_>>()
        );
        for a in answers.iter().filter(|a| a.status != StatusCode::OK) {
            assert_eq!(a.status, StatusCode::BAD_REQUEST, "{}", a.body);
            assert_eq!(a.error_code(), "payment_method_unusable");
        }
        let made = app.get("/v2/payments?limit=100", app.sk()).await.body["data"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["payment_method"]["id"] == pm_id.as_str())
            .count();
        assert_eq!(made, 1);
    }
    // A token the bank refused is not consumed: it can be tried again.
    let declined = app
        .post("/v2/payment_methods", app.pk(), card("4000000000000002"))
        .await
        .id();
    for _ in 0..2 {
        let a = app
            .post(
                "/v2/payments",
                app.sk(),
                json!({"amount": 1000, "currency": "usd", "payment_method": declined}),
            )
            .await;
        assert_eq!(a.status, StatusCode::PAYMENT_REQUIRED, "{}", a.body);
    }
}

/// L6: a saved card charged while its customer is being deleted is either charged before the
/// deletion or refused; never recorded after it.
#[tokio::test]
async fn a_saved_card_is_never_charged_after_its_customer_was_deleted() {
    let Some(app) = spawn_app().await else { return };
    for _ in 0..5 {
        let customer = app.post("/v2/customers", app.sk(), json!({})).await.id();
        let first = app
            .post(
                "/v2/payments",
                app.sk(),
                json!({"amount": 1000, "currency": "usd", "customer": customer,
                       "save_payment_method": true, "payment_method": card("4242424242424242")}),
            )
            .await;
        assert_eq!(first.status, StatusCode::OK, "{}", first.body);
        let pm = first.body["payment_method"]["id"]
            .as_str()
            .unwrap()
            .to_string();
        let charges = (0..9).map(|_| {
            app.post(
                "/v2/payments",
                app.sk(),
                json!({"amount": 500, "currency": "usd", "customer": customer, "payment_method": pm}),
            )
        });
        let path = format!("/v2/customers/{customer}");
        let delete = app.delete(&path, app.sk());
        let (answers, deleted) = tokio::join!(futures::future::join_all(charges), delete);
        assert_eq!(deleted.status, StatusCode::OK);
        for a in &answers {
            assert!(
                a.status == StatusCode::OK || a.status == StatusCode::BAD_REQUEST,
                "{} {}",
                a.status,
                a.body
            );
        }
        // Events newest first, in commit order: no success of this customer after the deletion.
        let events = app.get("/v2/events?limit=100", app.sk()).await.body["data"]
            .as_array()
            .unwrap()
            .clone();
        let deleted_at = events
            .iter()
            .position(|e| {
                e["type"] == "customer.deleted" && e["data"]["object"]["id"] == customer.as_str()
            })
            .unwrap();
        let after: Vec<_> = events[..deleted_at]
            .iter()
            .filter(|e| {
                e["type"] == "payment.succeeded"
                    && e["data"]["object"]["customer"] == customer.as_str()
            })
            .collect();
        assert!(after.is_empty(), "charged after the deletion: {after:?}");
    }
}
