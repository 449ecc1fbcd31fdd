//! Tests of [`super`] (`connector.rs`), kept apart so the module reads as what it does.

use super::*;
use crate::card::{validate_card, CardInput};
use crate::connectors::simulator::{Fault, SimulatedConnector};
use crate::money::Currency;
use crate::secret::Secret;

fn card(number: &str) -> ValidatedCard {
    let input = CardInput {
        number: Secret::from(number),
        exp_month: 12,
        exp_year: 2040,
        cvc: Secret::from("123"),
    };
    validate_card(&input, 2025, 1).unwrap()
}

fn request<'a>(card: &'a ValidatedCard, capture: bool) -> AuthorizeRequest<'a> {
    AuthorizeRequest {
        payment: "pay_1",
        amount: 1000,
        currency: Currency::parse("usd").unwrap(),
        capture,
        source: Source::Card(card),
        return_url: None,
        livemode: false,
    }
}

async fn authorize(sim: &SimulatedConnector, req: &AuthorizeRequest<'_>) -> Answer {
    match sim.create(req).await {
        Answer::Known {
            reference: Some(reference),
            state: Upstream::Created,
        } => sim.confirm(&reference, req).await,
        other => other,
    }
}

#[tokio::test]
async fn the_simulator_answers_its_table_through_the_port() {
    let sim = SimulatedConnector::new();
    let ok = card("4242424242424242");
    let Answer::Known { reference, state } = authorize(&sim, &request(&ok, true)).await else {
        panic!("known")
    };
    assert_eq!(reference.as_deref(), Some("sim_pay_1"));
    assert_eq!(
        state,
        Upstream::Succeeded {
            captured: 1000,
            currency: Some("usd".into()),
            settlement: None,
        }
    );
    let held = authorize(&sim, &request(&ok, false)).await;
    assert!(matches!(
        held,
        Answer::Known {
            state: Upstream::RequiresCapture,
            ..
        }
    ));
    let declined = card("4000000000009995");
    match authorize(&sim, &request(&declined, true)).await {
        Answer::Known {
            state: Upstream::Declined(d),
            ..
        } => assert_eq!(d.decline_code, "insufficient_funds"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn faults_say_unavailable_before_and_unknown_after_sending() {
    let sim = SimulatedConnector::new();
    let ok = card("4242424242424242");
    sim.set_fault(Some(Fault::Unavailable));
    assert!(matches!(
        sim.create(&request(&ok, true)).await,
        Answer::NotSent(_)
    ));
    // Nothing was made: a sync does not know it.
    sim.set_fault(None);
    assert!(matches!(
        sim.sync("sim_pay_1").await,
        Answer::Unavailable(_)
    ));
    sim.set_fault(Some(Fault::ServerError));
    assert!(matches!(
        sim.create(&request(&ok, true)).await,
        Answer::Unavailable(_)
    ));
    sim.set_fault(None);
    let Answer::Known {
        reference: Some(reference),
        ..
    } = sim.create(&request(&ok, true)).await
    else {
        panic!("created")
    };
    sim.set_fault(Some(Fault::TimeoutAfterSend));
    let Answer::Unknown { reference, .. } = sim.confirm(&reference, &request(&ok, true)).await
    else {
        panic!("unknown")
    };
    sim.set_fault(None);
    // The payment was made; sync finds it.
    assert_eq!(
        sim.sync(reference.as_deref().unwrap()).await,
        Answer::Known {
            reference: Some("sim_pay_1".into()),
            state: Upstream::Succeeded {
                captured: 1000,
                currency: Some("usd".into()),
                settlement: None,
            }
        }
    );
}

#[test]
fn upstream_keys_are_derived_from_the_object_and_operation() {
    assert_eq!(upstream_key("pay_1", "create"), "tender-pay_1-create");
    assert_ne!(
        upstream_key("pay_1", "create"),
        upstream_key("pay_1", "capture")
    );
}

#[test]
fn settings_never_print_their_secrets() {
    let s = ConnectorSettings {
        kind: ConnectorType::Stripe,
        api_base: None,
        api_key: Some("sk_test_secret".into()),
        webhook_secret: Some("whsec_secret".into()),
        raw_card_data: false,
        cards_by_operator: false,
    };
    let shown = format!("{s:?}");
    assert!(!shown.contains("sk_test_secret") && !shown.contains("whsec_secret"));
}

#[test]
fn a_processor_takes_cards_only_when_the_operator_said_so() {
    let mut s = ConnectorSettings {
        kind: ConnectorType::Stripe,
        api_base: None,
        api_key: None,
        webhook_secret: None,
        raw_card_data: true,
        cards_by_operator: false,
    };
    // Set through a merchant's key before the setting became the operator's.
    assert!(!s.takes_cards());
    s.cards_by_operator = true;
    assert!(s.takes_cards());
    s.raw_card_data = false;
    assert!(!s.takes_cards());
    // The simulator keeps the card in the process: the merchant's choice.
    s.kind = ConnectorType::Simulator;
    s.raw_card_data = true;
    s.cards_by_operator = false;
    assert!(s.takes_cards());
}
