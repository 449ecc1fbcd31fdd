//! Every endpoint's request decoding, as the server runs it: the first byte picks a route from
//! `tender_server::http::routes::ROUTES`, an optional `/<id>\n` replaces the well-formed path
//! id, and the rest is the JSON body (or the query string of a `GET`). Then the pure checks the
//! services run next (amount, card, IBAN, metadata, e-mail, phone, country, URL) are applied to
//! whatever decoded.
//!
//! Invariants: nothing panics; every refusal is a 4xx (never a 5xx); a parameter error names
//! its parameter unless the body is not JSON; a validated card agrees with itself.

#![no_main]

use std::any::Any;

use libfuzzer_sys::fuzz_target;
use tender_core::card::{brand_of, luhn_valid, validate_card, CardInput};
use tender_core::customers::service::CustomerFields;
use tender_core::error::CoreError;
use tender_core::ids::{looks_like, IdKind};
use tender_core::billing::catalog::{CreatePrice, CreateProduct};
use tender_core::billing::subscriptions::CreateSubscription;
use tender_core::ids::{CustomerId, PaymentId, RefundId, WebhookEndpointId};
use tender_core::payments::create::{CreatePayment, PaymentMethodInput};
use tender_core::payments::lifecycle::UpdatePayment;
use tender_core::refunds::service::CreateRefund;
use tender_core::validate::check_text;
use tender_core::validate::{email_valid, iban, normalize_country, phone_valid};
use tender_core::webhooks::service::{check_endpoint_url_syntax, EndpointFields};
use tender_server::http::operation::{Decoded, ListRequest};
use tender_server::http::routes::decode;
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

type Metadata = Vec<(String, String)>;

fn check_create_payment(c: &CreatePayment) {
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
            assert!(!t.is_empty() && t.len() <= 255 && t.bytes().all(|b| b.is_ascii_graphic()))
        }
    }
}

/// Whatever decoded, by the type its operation's parser makes (a type no check is written for
/// is left to the invariants of `expect_4xx`).
fn check_command(context: &str, cmd: Decoded) {
    let cmd: Box<dyn Any> = cmd;
    let cmd = match cmd.downcast::<CreatePayment>() {
        Ok(c) => return check_create_payment(&c),
        Err(other) => other,
    };
    let cmd = match cmd.downcast::<(CardInput, Metadata)>() {
        Ok(c) => {
            let (card, m) = *c;
            check_card(&card);
            return check_metadata(context, m);
        }
        Err(other) => other,
    };
    let cmd = match cmd.downcast::<CustomerFields>() {
        Ok(f) => return check_customer(context, *f),
        Err(other) => other,
    };
    let cmd = match cmd.downcast::<(CustomerId, CustomerFields)>() {
        Ok(f) => return check_customer(context, f.1),
        Err(other) => other,
    };
    let cmd = match cmd.downcast::<CreateRefund>() {
        Ok(r) => return check_metadata(context, r.metadata),
        Err(other) => other,
    };
    let cmd = match cmd.downcast::<(PaymentId, UpdatePayment)>() {
        Ok(u) => return u.1.metadata.into_iter().for_each(|m| check_metadata(context, m)),
        Err(other) => other,
    };
    let cmd = match cmd.downcast::<(RefundId, Metadata)>() {
        Ok(u) => return check_metadata(context, u.1),
        Err(other) => other,
    };
    let cmd = match cmd.downcast::<CreateProduct>() {
        Ok(p) => return check_metadata(context, p.metadata),
        Err(other) => other,
    };
    let cmd = match cmd.downcast::<CreatePrice>() {
        Ok(p) => return check_metadata(context, p.metadata),
        Err(other) => other,
    };
    let cmd = match cmd.downcast::<CreateSubscription>() {
        Ok(s) => {
            assert!(!s.items.is_empty() && s.items.len() <= 20);
            return check_metadata(context, s.metadata);
        }
        Err(other) => other,
    };
    let cmd = match cmd.downcast::<EndpointFields>() {
        Ok(f) => return check_endpoint(context, *f),
        Err(other) => other,
    };
    let cmd = match cmd.downcast::<(WebhookEndpointId, EndpointFields)>() {
        Ok(f) => return check_endpoint(context, f.1),
        Err(other) => other,
    };
    if let Ok(list) = cmd.downcast::<ListRequest>() {
        assert!((1..=100).contains(&list.params.limit));
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
