//! Every endpoint's request decoding, as the server runs it: the first byte picks a route from
//! `tender_server::http::routes::ROUTES`, an optional `/<id>\n` replaces the well-formed path
//! id, and the rest is the JSON body (or the query string of a `GET`). Then the pure checks the
//! services run next (amount, card, IBAN, metadata, e-mail, phone, country, URL) are applied to
//! whatever decoded.
//!
//! Invariants: nothing panics; every refusal is a 4xx (never a 5xx); a parameter error names
//! its parameter unless the body is not JSON; a validated card agrees with itself.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tender_core::card::{brand_of, luhn_valid, validate_card, CardInput};
use tender_core::customers::service::CustomerFields;
use tender_core::error::CoreError;
use tender_core::ids::{looks_like, IdKind};
use tender_core::payments::create::PaymentMethodInput;
use tender_core::validate::check_text;
use tender_core::validate::{email_valid, iban, normalize_country, phone_valid};
use tender_core::webhooks::service::{check_endpoint_url_syntax, EndpointFields};
use tender_server::http::decode::{decode, Command};
use tender_server::http::error::{wire, Failure};
use tender_server::http::routes::ROUTES;

/// Well-formed ids for the path, one per resource.
fn sample_id(template: &str) -> &'static str {
    match template.split('/').nth(1) {
        Some("payments") => "pay_4eC39HqLyjWDarjtT1zdp7dc",
        Some("payment_methods") => "pm_1MqLiJLkdIwHu7ix0ZvQxA7i",
        Some("customers") => "cus_NffrFeUfNV2Hib",
        Some("refunds") => "re_1Nispe2eZvKYlo2Cd31jOCgZ",
        Some("events") => "evt_1NG8Du2eZvKYlo2CUI79vXWy",
        _ => "we_1Mr5jULkdIwHu7ixZtWEXdFz",
    }
}

fn expect_4xx(context: &str, e: &CoreError) {
    let w = wire(Failure::Core(e));
    assert!(
        w.status.is_client_error(),
        "{context}: {e:?} would be answered {}",
        w.status
    );
    if let CoreError::InvalidParam {
        param: None, code, ..
    } = e
    {
        assert_eq!(*code, "invalid_json", "{context}: {e:?} names no parameter");
    }
}

fn check_card(card: &CardInput) {
    if let Ok(v) = validate_card(card, 2026, 11) {
        let pan = v.pan.expose();
        assert!(luhn_valid(pan) && (12..=19).contains(&pan.len()));
        assert!(pan.ends_with(&v.last4) && v.last4.len() == 4);
        assert_eq!(brand_of(pan), v.brand);
        assert!((1..=12).contains(&v.exp_month));
        assert!(!format!("{v:?}").contains(pan), "Debug shows the PAN");
    }
}

fn check_metadata(context: &str, m: Vec<(String, String)>) {
    if let Err(e) = tender_core::metadata::on_create(m) {
        expect_4xx(context, &e);
    }
}

fn check_customer(context: &str, f: CustomerFields) {
    if let Some(Some(e)) = &f.email {
        email_valid(e);
    }
    if let Some(Some(p)) = &f.phone {
        phone_valid(p);
    }
    if let Some(Some(a)) = &f.address {
        if let Some(c) = &a.country {
            if let Some(n) = normalize_country(c) {
                assert!(n.len() == 2 && n.eq_ignore_ascii_case(c));
            }
        }
    }
    let _ = check_text(
        "description",
        f.description.as_ref().and_then(|d| d.as_deref()),
        1000,
    );
    if let Some(m) = f.metadata {
        check_metadata(context, m);
    }
}

fn check_endpoint(context: &str, f: EndpointFields) {
    if let Some(url) = &f.url {
        for live in [false, true] {
            match check_endpoint_url_syntax(url, live) {
                Ok(u) => assert!(matches!(u.scheme(), "http" | "https")),
                Err(e) => expect_4xx(context, &e),
            }
        }
    }
}

fn check_command(context: &str, cmd: Command) {
    match cmd {
        Command::CreatePayment(c) => {
            // Amount, description, metadata and return URL were checked by the decoder (the
            // command's constructor); what it leaves to the service is checked here.
            assert!(c.amount.get() >= 1);
            // Ids are typed where they are read: none of another kind or shape gets through.
            if let Some(customer) = &c.customer {
                assert!(looks_like(IdKind::Customer, customer));
            }
            match &c.payment_method {
                PaymentMethodInput::Card(card) => check_card(card),
                PaymentMethodInput::BankTransfer { iban: i, .. } => {
                    if let Ok(v) = iban::validate(i.expose()) {
                        assert_eq!(v.country.len(), 2);
                        assert!(!format!("{v:?}").contains(v.normalized.expose()));
                    }
                }
                PaymentMethodInput::Saved(id) => assert!(looks_like(IdKind::PaymentMethod, id)),
                PaymentMethodInput::ConnectorToken(t) => {
                    assert!(
                        !t.is_empty() && t.len() <= 255 && t.bytes().all(|b| b.is_ascii_graphic())
                    )
                }
            }
        }
        Command::CreatePaymentMethod(card, m) => {
            check_card(&card);
            check_metadata(context, m);
        }
        Command::CreateCustomer(f) | Command::UpdateCustomer(_, f) => check_customer(context, f),
        Command::CreateRefund(r) => check_metadata(context, r.metadata),
        Command::UpdatePayment(_, u) => {
            if let Some(m) = u.metadata {
                check_metadata(context, m);
            }
        }
        Command::UpdateRefund(_, m) => check_metadata(context, m),
        Command::CreateProduct(p) => check_metadata(context, p.metadata),
        Command::CreatePrice(p) => check_metadata(context, p.metadata),
        Command::CreateSubscription(s) => {
            assert!(!s.items.is_empty() && s.items.len() <= 20);
            check_metadata(context, s.metadata)
        }
        Command::CreateWebhookEndpoint(f) | Command::UpdateWebhookEndpoint(_, f) => {
            check_endpoint(context, f)
        }
        Command::ListPayments((p, _))
        | Command::ListCustomers((p, _))
        | Command::ListRefunds((p, _))
        | Command::ListEvents((p, _))
        | Command::ListPaymentMethods(p, _)
        | Command::ListWebhookEndpoints(p)
        | Command::ListProducts((p, _))
        | Command::ListPrices((p, _))
        | Command::ListSubscriptions((p, _))
        | Command::ListInvoices((p, _))
        | Command::ListTestClocks(p) => assert!((1..=100).contains(&p.limit)),
        _ => {}
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let route = &ROUTES[usize::from(selector) % ROUTES.len()];
    let (method, template) = (route.method.as_str(), route.path);
    let (id, rest) = match rest.strip_prefix(b"/") {
        Some(r) if template.contains("{id}") => match r.iter().position(|b| *b == b'\n') {
            Some(i) => (String::from_utf8_lossy(&r[..i]).into_owned(), &r[i + 1..]),
            None => (sample_id(template).to_string(), rest),
        },
        _ => (sample_id(template).to_string(), rest),
    };
    let path = format!("/v2{}", template.replace("{id}", &id));
    let (query, body) = if method == "GET" {
        (std::str::from_utf8(rest).ok(), &[][..])
    } else {
        (None, rest)
    };
    let context = format!("{method} {template}");
    match decode(method, &path, query, body) {
        Ok(cmd) => check_command(&context, cmd),
        Err(e) => expect_4xx(&context, &e),
    }
});
