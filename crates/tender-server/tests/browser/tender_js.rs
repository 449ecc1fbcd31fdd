//! `tender.js` on a shop's page served from another origin: the card field mounted, a declined
//! card and a retry, 3-D Secure in Tender's page over the shop's, a saved card and a bare
//! PaymentMethod — and the shop's page never holding the card number (not in its DOM, not in
//! a request it sent, not in a key it heard).

use serde_json::{json, Value};

use super::{common, Chrome};

/// A shop's page: loads tender.js from Tender, mounts the card, and records everything it could
/// have seen of a card: the bodies it sent and the keys typed while it had focus.
const SHOP_PAGE: &str = r##"<!doctype html><html><head><meta charset="utf-8"><title>Shop</title>
<style>body{font-family:system-ui;max-width:28rem;margin:2rem auto}#card{margin:1rem 0}</style>
<script src="API/v1/tender.js"></script></head><body>
<h1>Linen apron, 24.00 EUR</h1>
<div id="card"></div><p id="state">empty</p>
<button id="pay">Pay</button> <button id="save">Save card</button> <button id="token">Card only</button>
<pre id="out"></pre>
<script>
window.sent = []; window.heard = [];
const realFetch = window.fetch;
window.fetch = (url, init) => { sent.push(String(url) + " " + String((init && init.body) || "")); return realFetch(url, init); };
document.addEventListener("keydown", e => heard.push(e.key), true);
const tender = Tender("PK", {apiBase: "API"});
const card = tender.elements().create("card");
card.on("change", e => { document.getElementById("state").textContent = e.complete ? "complete" : (e.error ? e.error.message : "incomplete"); });
card.mount("#card");
function show(r) { const out = document.getElementById("out"); out.textContent = JSON.stringify(r); out.dataset.n = String(+(out.dataset.n || 0) + 1); }
document.getElementById("pay").onclick = async () => show(await tender.confirmCardPayment(window.secret, {payment_method: {card, billing_details: {name: "Ada Lovelace"}}}));
document.getElementById("save").onclick = async () => show(await tender.confirmCardSetup(window.secret, {payment_method: {card}}));
document.getElementById("token").onclick = async () => show(await tender.createPaymentMethod({type: "card", card}));
</script></body></html>"##;

/// The card numbers this test types; none may ever reach the shop's page.
const NUMBERS: [&str; 3] = ["4000000000000002", "4000002500003155", "4242424242424242"];

impl Chrome {
    /// Types a card into the field's frame (the first frame of the shop's page).
    async fn type_card(&self, number: &str) {
        self.client.enter_frame(0).await.unwrap();
        self.type_into("#number", number).await;
        self.type_into("#expiry", "12 / 34").await;
        self.type_into("#cvc", "123").await;
        self.client.enter_parent_frame().await.unwrap();
    }

    /// Clicks `button` and returns what the page showed for its `n`th answer.
    async fn answer(&self, button: &str, n: u32) -> Value {
        self.css(button).await.click().await.unwrap();
        self.answer_shown(n).await
    }

    async fn answer_shown(&self, n: u32) -> Value {
        let text = self.text(&format!("#out[data-n='{n}']")).await;
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
    }
}

/// A `/v1` call with the shop's secret key, as its server makes it.
async fn server_call(app: &common::App, path: &str, form: &[(&str, &str)]) -> Value {
    let resp = reqwest::Client::new()
        .post(format!("{}/v1{path}", app.base))
        .bearer_auth(&app.account.keys.test.secret)
        .form(form)
        .send()
        .await
        .unwrap();
    assert!(resp.status().is_success(), "{path}: {}", resp.status());
    resp.json().await.unwrap()
}

#[tokio::test]
async fn a_shop_page_on_another_origin_takes_cards_through_tender_js_without_seeing_the_number() {
    let Some(b) = Chrome::start().await else {
        return;
    };
    let app = common::spawn_app().await;
    let page = SHOP_PAGE
        .replace("API", &app.base)
        .replace("PK", &app.account.keys.test.publishable);
    // Another port of 127.0.0.1: another origin than Tender's.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let shop = format!("http://{}/pay", listener.local_addr().unwrap());
    let router = axum::Router::new().route(
        "/pay",
        axum::routing::get(move || async move { axum::response::Html(page) }),
    );
    tokio::spawn(async move { axum::serve(listener, router).await });
    b.client.goto(&shop).await.unwrap();

    // The shop's server makes the PaymentIntent; its page gets the client secret only.
    let intent = server_call(
        &app,
        "/payment_intents",
        &[("amount", "2400"), ("currency", "eur")],
    )
    .await;
    let secret = intent["client_secret"].as_str().unwrap();
    b.client
        .execute("window.secret = arguments[0];", vec![json!(secret)])
        .await
        .unwrap();

    // A declined card: the decline comes back to the page, which may try another card.
    b.type_card("4000 0000 0000 0002").await;
    assert_eq!(
        b.text("#state").await,
        "complete",
        "the field says when it is complete"
    );
    b.shot("45-tender-js-card-field").await;
    let declined = b.answer("#pay", 1).await;
    assert_eq!(declined["error"]["code"], "card_declined", "{declined}");
    assert_eq!(declined["error"]["type"], "card_error");
    assert_eq!(declined["error"]["message"], "Your card was declined.");

    // A card that asks for 3-D Secure: Tender's page over the shop's, then the promise resolves.
    b.type_card("4000 0025 0000 3155").await;
    b.css("#pay").await.click().await.unwrap();
    let challenge = b.css("iframe[title='Confirm your payment']").await;
    b.shot("46-tender-js-three-d-secure").await;
    challenge.enter_frame().await.unwrap();
    assert!(b.page_text().await.contains("24.00 EUR"));
    b.css("button[value=complete]").await.click().await.unwrap();
    b.client.enter_parent_frame().await.unwrap();
    let paid = b.answer_shown(2).await;
    assert_eq!(paid["paymentIntent"]["status"], "succeeded", "{paid}");
    assert_eq!(paid["paymentIntent"]["id"], intent["id"]);
    assert!(
        b.client
            .find(fantoccini::Locator::Css(
                "iframe[title='Confirm your payment']"
            ))
            .await
            .is_err(),
        "the authentication page is closed once it is done"
    );

    // A saved card: a SetupIntent confirmed with the same field.
    let customer = server_call(&app, "/customers", &[("email", "ada@example.com")]).await;
    let setup = server_call(
        &app,
        "/setup_intents",
        &[
            ("customer", customer["id"].as_str().unwrap()),
            ("usage", "off_session"),
        ],
    )
    .await;
    b.client
        .execute(
            "window.secret = arguments[0];",
            vec![json!(setup["client_secret"])],
        )
        .await
        .unwrap();
    b.type_card("4242 4242 4242 4242").await;
    let saved = b.answer("#save", 3).await;
    assert_eq!(saved["setupIntent"]["status"], "succeeded", "{saved}");
    let method = saved["setupIntent"]["payment_method"].as_str().unwrap();
    let pm = reqwest::Client::new()
        .get(format!("{}/v1/payment_methods/{method}", app.base))
        .bearer_auth(&app.account.keys.test.secret)
        .send()
        .await
        .unwrap()
        .json::<Value>()
        .await
        .unwrap();
    assert_eq!(
        pm["customer"], customer["id"],
        "the card is saved to the customer"
    );

    // And a PaymentMethod alone.
    let token = b.answer("#token", 4).await;
    assert_eq!(token["paymentMethod"]["card"]["last4"], "4242", "{token}");

    // What the shop's page could have seen: never a number.
    let seen = b
        .client
        .execute(
            "return [document.documentElement.outerHTML, JSON.stringify(window.sent), \
             window.heard.join(''), String(document.querySelector('#card iframe').contentDocument)];",
            vec![],
        )
        .await
        .unwrap();
    let seen: Vec<String> = serde_json::from_value(seen).unwrap();
    for number in NUMBERS {
        let spaced: String = number
            .chars()
            .collect::<Vec<_>>()
            .chunks(4)
            .map(|c| c.iter().collect::<String>())
            .collect::<Vec<_>>()
            .join(" ");
        for (what, text) in ["DOM", "requests", "keys"].iter().zip(&seen) {
            assert!(
                !text.contains(number) && !text.contains(&spaced) && !text.contains(&number[..8]),
                "the shop page's {what} held {number}: {text}"
            );
        }
    }
    assert!(
        seen[1].contains("/confirm"),
        "the page did confirm: {}",
        seen[1]
    );
    assert_eq!(
        seen[3], "null",
        "the card field's document is closed to the shop's page"
    );
}
