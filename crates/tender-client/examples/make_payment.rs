//! Makes one test payment and prints it.
//!
//! ```sh
//! TENDER_API_KEY=sk_test_… cargo run -p tender-client --example make_payment
//! ```
//!
//! `TENDER_BASE_URL` defaults to `http://127.0.0.1:4242/v2`.

use tender_client::{CardParams, Client, CreatePayment, Error};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let base =
        std::env::var("TENDER_BASE_URL").unwrap_or_else(|_| "http://127.0.0.1:4242/v2".into());
    let key = std::env::var("TENDER_API_KEY").map_err(|_| "set TENDER_API_KEY to a secret key")?;
    let client = Client::new(base, key);

    let card = CardParams::new("4242424242424242", 12, 2034, "123");
    let params = CreatePayment::new(2000, "usd", card).description("tender-client example");
    match client.payments().create(&params).await {
        Ok(payment) => println!(
            "{} {} — {}",
            payment.id, payment.status, payment.receipt_url
        ),
        Err(Error::Api(e)) if e.is_card_error() => {
            println!(
                "declined: {} ({:?}), payment {:?}",
                e.code, e.decline_code, e.payment
            )
        }
        Err(e) => return Err(e.into()),
    }
    Ok(())
}
