"""The walkthrough of README.md against a real ``tender serve``: a customer, a payment, a decline,
a refund, paging through payments, a webhook verified with both schemes, errors by type."""

from __future__ import annotations

import http.server
import json
import threading
from typing import Any

import pytest

from tender import SignatureVerificationError, Tender, errors, models, webhooks

from .conftest import Server

VISA: models.CardPaymentMethodInput = {
    "type": "card",
    "card": {"number": "4242424242424242", "exp_month": 12, "exp_year": 2035, "cvc": "123"},
}
DECLINED: models.CardPaymentMethodInput = {
    "type": "card",
    "card": {"number": "4000000000009995", "exp_month": 12, "exp_year": 2035, "cvc": "123"},
}


def test_customer_payment_refund(client: Tender) -> None:
    customer = client.customers.create(email="ada@example.com", name="Ada")
    assert customer["id"].startswith("cus_")
    payment = client.payments.create(
        amount=2500,
        currency="usd",
        customer=customer["id"],
        payment_method=VISA,
        metadata={"order": "1001"},
    )
    assert payment["status"] == "succeeded"
    assert payment["amount_captured"] == 2500
    # null only while a payment created through /v1 awaits a method; never after a create.
    method = payment["payment_method"]
    assert method is not None and method["card"]["last4"] == "4242"
    refund = client.refunds.create(payment=payment["id"], amount=1000)
    assert refund["status"] == "succeeded"
    again = client.payments.retrieve(payment["id"])
    assert again["amount_refunded"] == 1000
    assert again["metadata"] == {"order": "1001"}


def test_a_decline_raises_card_error_with_its_payment(client: Tender) -> None:
    with pytest.raises(errors.CardError) as caught:
        client.payments.create(amount=1500, currency="usd", payment_method=DECLINED)
    err = caught.value
    assert err.status == 402
    assert err.code == "card_declined"
    assert err.decline_code == "insufficient_funds"
    assert err.payment is not None and err.payment.startswith("pay_")
    assert err.request_id is not None
    failed = client.payments.retrieve(err.payment)
    assert failed["status"] == "failed"
    assert failed["decline_code"] == "insufficient_funds"


def test_bad_input_and_a_wrong_key_raise_typed_errors(server: Server, client: Tender) -> None:
    with pytest.raises(errors.InvalidRequestError) as bad:
        client.payments.create(amount=-5, currency="usd", payment_method=VISA)
    assert bad.value.param == "amount"
    with pytest.raises(errors.InvalidRequestError) as missing:
        client.payments.retrieve("pay_doesnotexist000000000000")
    assert missing.value.status == 404
    assert missing.value.code == "resource_missing"
    with Tender("sk_test_wrong", base_url=server.base_url) as wrong:
        with pytest.raises(errors.AuthenticationError) as auth:
            wrong.customers.list()
    assert auth.value.status == 401


def test_the_same_idempotency_key_replays_the_payment(client: Tender) -> None:
    first = client.payments.create(
        amount=700, currency="usd", payment_method=VISA, idempotency_key="py-order-7"
    )
    second = client.payments.create(
        amount=700, currency="usd", payment_method=VISA, idempotency_key="py-order-7"
    )
    assert first["id"] == second["id"]
    with pytest.raises(errors.IdempotencyError) as reused:
        client.payments.create(
            amount=701, currency="usd", payment_method=VISA, idempotency_key="py-order-7"
        )
    assert reused.value.status == 400


def test_pages_through_every_payment_newest_first(client: Tender) -> None:
    customer = client.customers.create(email="pager@example.com")
    made = [
        client.payments.create(
            amount=100 + i, currency="usd", customer=customer["id"], payment_method=VISA
        )["id"]
        for i in range(7)
    ]
    page = client.payments.list(customer=customer["id"], limit=3)
    assert len(page) == 3 and page.has_more
    seen = [p["id"] for p in page.auto_paging_iter()]
    assert seen == list(reversed(made))


def test_a_delivered_webhook_verifies_with_both_schemes(client: Tender) -> None:
    got: list[tuple[bytes, dict[str, str]]] = []
    arrived = threading.Event()

    class Receiver(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            got.append((body, {k.lower(): v for k, v in self.headers.items()}))
            self.send_response(200)
            self.end_headers()
            arrived.set()

        def log_message(self, *args: Any) -> None:
            pass

    httpd = http.server.HTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        endpoint = client.webhook_endpoints.create(
            url=f"http://127.0.0.1:{httpd.server_port}/hook", enabled_events=["customer.created"]
        )
        secret = endpoint["secret"]
        customer = client.customers.create(email="hooked@example.com")
        assert arrived.wait(10), "no delivery within 10 s"
    finally:
        httpd.shutdown()
    body, headers = got[0]
    event = webhooks.construct_event(body, headers["tender-signature"], secret)
    assert event["type"] == "customer.created"
    # Not every event's object has an id (balance.available's balance): read it with .get.
    assert event["data"]["object"].get("id") == customer["id"]
    standard = webhooks.construct_event_standard(body, headers, secret)
    assert standard["id"] == event["id"]
    # A changed body, another secret, or an old timestamp are refused.
    with pytest.raises(SignatureVerificationError):
        webhooks.construct_event(body + b" ", headers["tender-signature"], secret)
    with pytest.raises(SignatureVerificationError):
        webhooks.construct_event_standard(body, headers, "whsec_" + "A" * 43 + "=")
    stamp = int(headers["webhook-timestamp"])
    with pytest.raises(SignatureVerificationError):
        webhooks.construct_event(
            body, headers["tender-signature"], secret, now=stamp + 301
        )
    assert json.loads(body)["id"] == event["id"]


def test_the_event_stream_yields_new_events_and_resumes_after_the_last_one(client: Tender) -> None:
    client.customers.create(name="Before")
    newest = client.events.list(limit=1).data[0]["id"]
    stream = client.events.stream(after=newest)
    first = client.customers.create(name="First")
    second = client.customers.create(name="Second")
    a, b = next(stream), next(stream)
    assert (a["type"], a["data"]["object"].get("id")) == ("customer.created", first["id"])
    assert b["data"]["object"].get("id") == second["id"]
    assert a == client.events.retrieve(a["id"])
    stream.close()
    # Resuming after the first replays the second.
    assert next(client.events.stream(after=a["id"]))["id"] == b["id"]
    with pytest.raises(errors.InvalidRequestError) as e:
        next(client.events.stream(after="evt_doesnotexist"))
    assert e.value.code == "resource_missing"


def test_a_trial_set_to_pause_without_a_card_is_resumed_only_once_paused(client: Tender) -> None:
    customer = client.customers.create(email="trial@example.com")
    product = client.products.create(name="Plan")
    price = client.prices.create(
        product=product["id"], currency="usd", unit_amount=900, recurring={"interval": "month"}
    )
    sub = client.subscriptions.create(
        customer=customer["id"],
        items=[{"price": price["id"]}],
        trial_period_days=7,
        trial_settings={"end_behavior": {"missing_payment_method": "pause"}},
    )
    assert sub["status"] == "trialing"
    assert sub["trial_settings"]["end_behavior"]["missing_payment_method"] == "pause"
    with pytest.raises(errors.InvalidRequestError) as e:
        client.subscriptions.resume(sub["id"])
    assert e.value.code == "subscription_unexpected_state"
