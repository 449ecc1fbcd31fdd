//! The recipes of the Checkout events: sessions paid on their hosted page as a browser without
//! JavaScript would (the page, its one-time token, the form), payment links, and the
//! card-testing guard's block.

use anyhow::bail;
use serde_json::{json, Value};

use super::{id, no_recipe, object, About};
use crate::trigger::{Calls, CARD_DECLINED, CARD_OK};

/// A payment-mode session for one 20.00 usd line.
async fn session(c: &Calls) -> anyhow::Result<Value> {
    c.post(
        "/checkout_sessions",
        json!({
            "mode": "payment",
            "success_url": "https://shop.example/thanks",
            "line_items": [{"price_data": {"currency": "usd", "unit_amount": 2000,
                "product_data": {"name": "tender trigger"}}}],
        }),
    )
    .await
}

fn url_of(session: &Value) -> anyhow::Result<&str> {
    session["url"]
        .as_str()
        .ok_or_else(|| anyhow::anyhow!("the session has no url"))
}

/// A Checkout Session for one 20.00 usd line: expired through the API, or paid on its hosted
/// page as a customer's browser without JavaScript would (the page, its token, the form).
pub(crate) async fn checkout_recipe(c: &Calls, event_type: &str) -> anyhow::Result<About> {
    let session = session(c).await?;
    let cs = id(session.clone())?;
    match event_type {
        "checkout_session.expired" => {
            c.post(&format!("/checkout_sessions/{cs}/expire"), json!({}))
                .await?;
        }
        "checkout_session.completed" => {
            let (status, _) = send_card(url_of(&session)?, CARD_OK).await?;
            if status != reqwest::StatusCode::SEE_OTHER {
                bail!("the checkout page did not take the test card ({status})");
            }
        }
        other => return no_recipe(other),
    }
    Ok(object(cs))
}

/// A payment link for a 15.00 usd price; deactivated for `payment_link.updated`.
pub(crate) async fn payment_link_recipe(c: &Calls, event_type: &str) -> anyhow::Result<About> {
    let product = id(c
        .post("/products", json!({"name": "tender trigger"}))
        .await?)?;
    let price = id(c
        .post(
            "/prices",
            json!({"product": product, "currency": "usd", "unit_amount": 1500}),
        )
        .await?)?;
    let link = id(c
        .post("/payment_links", json!({"line_items": [{"price": price}]}))
        .await?)?;
    match event_type {
        "payment_link.created" => {}
        "payment_link.updated" => {
            c.post(&format!("/payment_links/{link}"), json!({"active": false}))
                .await?;
        }
        other => return no_recipe(other),
    }
    Ok(object(link))
}

/// Sends the card `number` through the Checkout page at `url`, as its form does: the answer's
/// status (`303` paid, `402` declined, `429` no more tries) and whether the page it answered
/// takes another try (has a form).
async fn send_card(url: &str, number: &str) -> anyhow::Result<(reqwest::StatusCode, bool)> {
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()?;
    let html = http
        .get(url)
        .send()
        .await?
        .error_for_status()?
        .text()
        .await?;
    let marker = "name=\"token\" value=\"";
    let at = html
        .find(marker)
        .ok_or_else(|| anyhow::anyhow!("the page at {url} has no form"))?
        + marker.len();
    let token = &html[at..at + html[at..].find('"').unwrap_or(0)];
    let answer = http
        .post(url)
        .form(&[
            ("token", token),
            ("email", "trigger@example.com"),
            ("card_number", number),
            ("card_expiry", "12/34"),
            ("card_cvc", "123"),
        ])
        .send()
        .await?;
    let status = answer.status();
    println!("POST {url} -> {status}");
    let again = answer.text().await?.contains(marker);
    Ok((status, again))
}

/// A session's page sent a declined card until the session takes no more (the account's
/// `declines_per_session`, 3 by default): the last decline is the block.
pub(crate) async fn blocked_recipe(c: &Calls) -> anyhow::Result<About> {
    let session = session(c).await?;
    let cs = id(session.clone())?;
    let url = url_of(&session)?;
    for _ in 0..1000 {
        match send_card(url, CARD_DECLINED).await? {
            (reqwest::StatusCode::PAYMENT_REQUIRED, true) => continue,
            (reqwest::StatusCode::PAYMENT_REQUIRED | reqwest::StatusCode::TOO_MANY_REQUESTS, _) => {
                return Ok(About {
                    field: "reference",
                    value: cs,
                })
            }
            (other, _) => bail!("the checkout page answered {other} to a declined card"),
        }
    }
    bail!("the checkout page never stopped taking declined cards")
}
