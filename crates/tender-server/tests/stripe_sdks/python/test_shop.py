"""A shop's Stripe code, unchanged but for the base address, against a real `tender serve`.

Run by tests/stripe_sdks.rs with the official stripe-python (pinned: 16.1.0) and the
environment TENDER_BASE (the API's address), TENDER_SK (a test secret key), and the keys of
another account for the card-testing test (TENDER_GUARD_SK, TENDER_GUARD_PK). Written as a
shop's server would call Stripe: the module-level API and the StripeClient both.
"""

import http.server
import os
import threading
import time
import unittest
import uuid

import stripe

BASE = os.environ["TENDER_BASE"]
SK = os.environ["TENDER_SK"]
GUARD_SK = os.environ["TENDER_GUARD_SK"]
GUARD_PK = os.environ["TENDER_GUARD_PK"]

stripe.api_key = SK
stripe.api_base = BASE
# Retries would hide a wrong status; the SDK's own idempotency keys are tested below.
stripe.max_network_retries = 0


class Pinned(unittest.TestCase):
    def test_the_sdk_is_the_pinned_one(self):
        self.assertEqual(stripe.VERSION, "16.1.0")
        self.assertEqual(stripe.api_version, "2026-10-28.endive")


class Payments(unittest.TestCase):
    def test_a_saved_card_pays_and_is_refunded(self):
        customer = stripe.Customer.create(email="ada@example.com", name="Ada", metadata={"plan": "pro"})
        self.assertTrue(customer.id.startswith("cus_"))
        self.assertEqual(customer.metadata["plan"], "pro")
        pm = stripe.PaymentMethod.attach("pm_card_visa", customer=customer.id)
        self.assertEqual(pm.card.last4, "4242")
        self.assertEqual(pm.customer, customer.id)

        intent = stripe.PaymentIntent.create(
            amount=2000,
            currency="usd",
            customer=customer.id,
            payment_method=pm.id,
            off_session=True,
            confirm=True,
            expand=["latest_charge"],
        )
        self.assertEqual(intent.status, "succeeded")
        self.assertEqual(intent.amount_received, 2000)
        charge = intent.latest_charge
        self.assertIsInstance(charge, stripe.Charge)
        self.assertEqual(charge.payment_method_details.card.brand, "visa")
        self.assertTrue(charge.paid)

        refund = stripe.Refund.create(payment_intent=intent.id, amount=500)
        self.assertEqual(refund.status, "succeeded")
        self.assertEqual(refund.charge, charge.id)
        self.assertEqual(stripe.Charge.retrieve(charge.id).amount_refunded, 500)
        refund = stripe.Refund.modify(refund.id, metadata={"reason": "damaged"})
        self.assertEqual(refund.metadata["reason"], "damaged")

        listed = stripe.Customer.list_payment_methods(customer.id)
        self.assertEqual([m.id for m in listed.data], [pm.id])
        stripe.PaymentMethod.detach(pm.id)
        self.assertEqual(stripe.Customer.list_payment_methods(customer.id).data, [])

    def test_a_decline_raises_card_error_with_its_decline_code(self):
        with self.assertRaises(stripe.CardError) as caught:
            stripe.PaymentIntent.create(
                amount=1500,
                currency="usd",
                payment_method="pm_card_chargeDeclinedInsufficientFunds",
                confirm=True,
            )
        err = caught.exception
        self.assertEqual(err.code, "card_declined")
        self.assertEqual(err.http_status, 402)
        self.assertEqual(err.error.decline_code, "insufficient_funds")
        self.assertEqual(err.error.payment_intent.status, "requires_payment_method")
        # The same intent, tried again with another card.
        intent = stripe.PaymentIntent.confirm(err.error.payment_intent.id, payment_method="pm_card_visa")
        self.assertEqual(intent.status, "succeeded")

    def test_manual_capture_and_three_d_secure(self):
        held = stripe.PaymentIntent.create(
            amount=5000, currency="eur", payment_method="pm_card_visa", capture_method="manual", confirm=True
        )
        self.assertEqual(held.status, "requires_capture")
        # Its authorisation is Stripe's amount_capturable_updated event.
        capturable = stripe.Event.list(type="payment_intent.amount_capturable_updated", limit=5)
        self.assertIn(held.id, [e.data.object.id for e in capturable.data])
        captured = stripe.PaymentIntent.capture(held.id, amount_to_capture=4000)
        self.assertEqual((captured.status, captured.amount_received), ("succeeded", 4000))

        challenged = stripe.PaymentIntent.create(
            amount=5000,
            currency="usd",
            payment_method="pm_card_authenticationRequired",
            return_url="https://shop.example/done",
            confirm=True,
        )
        self.assertEqual(challenged.status, "requires_action")
        self.assertEqual(challenged.next_action.type, "redirect_to_url")
        self.assertTrue(challenged.next_action.redirect_to_url.url.startswith("http"))
        canceled = stripe.PaymentIntent.cancel(challenged.id)
        self.assertEqual(canceled.status, "canceled")

    def test_an_intent_made_first_is_confirmed_later(self):
        intent = stripe.PaymentIntent.create(amount=1200, currency="gbp", automatic_payment_methods={"enabled": True})
        self.assertEqual(intent.status, "requires_payment_method")
        self.assertTrue(intent.client_secret.startswith(intent.id + "_secret_"))
        intent = stripe.PaymentIntent.modify(intent.id, description="Order 42", metadata={"order": "42"})
        self.assertEqual(intent.description, "Order 42")
        intent = stripe.PaymentIntent.confirm(intent.id, payment_method="pm_card_mastercard")
        self.assertEqual(intent.status, "succeeded")
        self.assertEqual(stripe.PaymentIntent.retrieve(intent.id).metadata["order"], "42")

    def test_a_setup_intent_saves_a_card_that_pays_off_session_later(self):
        customer = stripe.Customer.create(email="setup@example.com")
        setup = stripe.SetupIntent.create(customer=customer.id, usage="off_session")
        self.assertEqual(setup.status, "requires_payment_method")
        self.assertTrue(setup.client_secret.startswith(setup.id + "_secret_"))
        with self.assertRaises(stripe.CardError) as caught:
            stripe.SetupIntent.confirm(setup.id, payment_method="pm_card_chargeDeclined")
        self.assertEqual(caught.exception.error.setup_intent.status, "requires_payment_method")
        self.assertEqual(caught.exception.error.setup_intent.last_setup_error.code, "card_declined")
        setup = stripe.SetupIntent.confirm(setup.id, payment_method="pm_card_visa")
        self.assertEqual(setup.status, "succeeded")
        saved = stripe.Customer.list_payment_methods(customer.id)
        self.assertEqual([m.id for m in saved.data], [setup.payment_method])
        later = stripe.PaymentIntent.create(
            amount=990,
            currency="usd",
            customer=customer.id,
            payment_method=setup.payment_method,
            off_session=True,
            confirm=True,
        )
        self.assertEqual(later.status, "succeeded")
        listed = stripe.SetupIntent.list(customer=customer.id)
        self.assertEqual([s.id for s in listed.data], [setup.id])
        other = stripe.SetupIntent.create(customer=customer.id)
        self.assertEqual(stripe.SetupIntent.cancel(other.id).status, "canceled")


class Billing(unittest.TestCase):
    def wait_ready(self, clock_id):
        # As Stripe's docs advise: poll the clock until its advance has run.
        for _ in range(600):
            clock = stripe.test_helpers.TestClock.retrieve(clock_id)
            if clock.status == "ready":
                return clock
            time.sleep(0.05)
        self.fail("the test clock never finished advancing")

    def test_a_subscription_on_a_test_clock_bills_every_month(self):
        start = 1_900_000_000
        clock = stripe.test_helpers.TestClock.create(frozen_time=start, name="a quarter")
        customer = stripe.Customer.create(email="saas@example.com", test_clock=clock.id)
        pm = stripe.PaymentMethod.attach("pm_card_visa", customer=customer.id)
        product = stripe.Product.create(name="Team plan")
        stripe.Price.create(
            product=product.id, currency="usd", unit_amount=1500, recurring={"interval": "month"}, lookup_key="team_monthly"
        )
        # As Stripe's guides do: the plan found by its lookup key, the card as the customer's
        # default for invoices.
        (price,) = stripe.Price.list(lookup_keys=["team_monthly"], expand=["data.product"]).data
        self.assertEqual(price.product.name, "Team plan")
        stripe.Customer.modify(customer.id, invoice_settings={"default_payment_method": pm.id})
        sub = stripe.Subscription.create(
            customer=customer.id,
            items=[{"price": price.id, "quantity": 2}],
            expand=["latest_invoice"],
        )
        self.assertEqual(sub.status, "active")
        self.assertEqual(sub.latest_invoice.status, "paid")
        self.assertEqual(sub.latest_invoice.amount_paid, 3000)
        self.assertEqual(sub["items"].data[0].price.id, price.id)
        self.assertEqual(sub.latest_invoice.billing_reason, "subscription_create")
        # What the next renewal will bill, before it does; the invoice made is final already.
        preview = stripe.Invoice.create_preview(subscription=sub.id)
        self.assertEqual((preview.amount_due, preview.billing_reason), (3000, "upcoming"))
        self.assertEqual(preview.period_start, sub["items"].data[0].current_period_end)
        with self.assertRaises(stripe.InvalidRequestError) as caught:
            stripe.Invoice.finalize_invoice(sub.latest_invoice.id)
        self.assertEqual(caught.exception.code, "invoice_unexpected_state")
        stripe.test_helpers.TestClock.advance(clock.id, frozen_time=start + 65 * 86400)
        self.wait_ready(clock.id)
        invoices = list(stripe.Invoice.list(customer=customer.id).auto_paging_iter())
        self.assertEqual([i.status for i in invoices], ["paid"] * 3)
        self.assertEqual({i.parent.subscription_details.subscription for i in invoices}, {sub.id})
        # Numbered in the account's gap-free sequence, in the order they were finalized (the
        # list is newest first); a preview has none; each has its PDF.
        numbers = [i.number for i in reversed(invoices)]
        prefix = numbers[0].rsplit("-", 1)[0]
        self.assertEqual(len(prefix), 8)
        seqs = [int(n.rsplit("-", 1)[1]) for n in numbers]
        self.assertEqual(seqs, list(range(seqs[0], seqs[0] + 3)))
        self.assertIsNone(preview.number)
        self.assertTrue(all(i.invoice_pdf == i.hosted_invoice_url + "/pdf" for i in invoices))
        self.assertEqual(stripe.Subscription.cancel(sub.id).status, "canceled")
        self.assertTrue(stripe.test_helpers.TestClock.delete(clock.id).deleted)
        # Its customer's subscriptions went with the clock.
        with self.assertRaises(stripe.InvalidRequestError):
            stripe.Subscription.retrieve(sub.id)

    def test_a_subscription_paid_by_the_customer_as_stripes_guide_builds_it(self):
        customer = stripe.Customer.create(email="guide@example.com")
        price = stripe.Price.create(
            product_data={"name": "Guide plan"}, currency="usd", unit_amount=900, recurring={"interval": "month"}
        )
        sub = stripe.Subscription.create(
            customer=customer.id,
            items=[{"price": price.id}],
            payment_behavior="default_incomplete",
            expand=["latest_invoice.confirmation_secret"],
        )
        self.assertEqual(sub.status, "incomplete")
        secret = sub.latest_invoice.confirmation_secret.client_secret
        # What stripe.js does in the customer's browser with that secret.
        intent = stripe.PaymentIntent.confirm(secret.split("_secret_")[0], payment_method="pm_card_visa")
        self.assertEqual(intent.status, "succeeded")
        for _ in range(100):
            sub = stripe.Subscription.retrieve(sub.id, expand=["latest_invoice"])
            if sub.status == "active":
                break
            time.sleep(0.05)
        self.assertEqual((sub.status, sub.latest_invoice.status), ("active", "paid"))

    def test_a_free_trial_without_a_card_pauses_then_resumes(self):
        # Stripe's "trials without payment method" guide: pause at the trial's end, resume once
        # the customer saved a card.
        start = 1_900_000_000
        clock = stripe.test_helpers.TestClock.create(frozen_time=start)
        customer = stripe.Customer.create(email="free-trial@example.com", test_clock=clock.id)
        price = stripe.Price.create(
            product_data={"name": "Trial plan"}, currency="usd", unit_amount=2500, recurring={"interval": "month"}
        )
        sub = stripe.Subscription.create(
            customer=customer.id,
            items=[{"price": price.id}],
            trial_period_days=14,
            trial_settings={"end_behavior": {"missing_payment_method": "pause"}},
        )
        self.assertEqual(sub.status, "trialing")
        stripe.test_helpers.TestClock.advance(clock.id, frozen_time=start + 15 * 86400)
        self.wait_ready(clock.id)
        self.assertEqual(stripe.Subscription.retrieve(sub.id).status, "paused")
        stripe.PaymentMethod.attach("pm_card_visa", customer=customer.id)
        resumed = stripe.Subscription.resume(sub.id, billing_cycle_anchor="now", expand=["latest_invoice"])
        self.assertEqual(resumed.status, "active")
        self.assertEqual((resumed.latest_invoice.status, resumed.latest_invoice.amount_paid), ("paid", 2500))
        with self.assertRaises(stripe.InvalidRequestError):
            stripe.Subscription.resume(sub.id)

    def test_error_if_incomplete_raises_the_decline_and_leaves_nothing_to_bill(self):
        customer = stripe.Customer.create(email="strict@example.com")
        stripe.PaymentMethod.attach("pm_card_chargeCustomerFail", customer=customer.id)
        price = stripe.Price.create(
            product_data={"name": "Strict plan"}, currency="usd", unit_amount=700, recurring={"interval": "month"}
        )
        with self.assertRaises(stripe.CardError) as caught:
            stripe.Subscription.create(
                customer=customer.id, items=[{"price": price.id}], payment_behavior="error_if_incomplete"
            )
        self.assertEqual(caught.exception.http_status, 402)
        (ended,) = stripe.Subscription.list(customer=customer.id, status="all").data
        self.assertEqual(ended.status, "incomplete_expired")

    def test_a_payout_without_a_default_destination_is_an_invalid_request(self):
        # Stripe's payouts name no bank account: Tender pays out to the account's default
        # destination, and says so when there is none.
        with self.assertRaises(stripe.InvalidRequestError) as caught:
            stripe.Payout.create(amount=500, currency="usd")
        self.assertEqual(caught.exception.param, "destination")
        self.assertEqual(caught.exception.http_status, 400)

    def test_the_balance_and_its_transactions(self):
        stripe.PaymentIntent.create(amount=10000, currency="chf", payment_method="pm_card_visa", confirm=True)
        balance = stripe.Balance.retrieve()
        pending = {b.currency: b.amount for b in balance.pending}
        self.assertGreater(pending["chf"], 0)
        txn = stripe.BalanceTransaction.list(type="charge", limit=1, expand=["data.source"]).data[0]
        self.assertEqual(txn.amount - txn.fee, txn.net)
        self.assertIsInstance(txn.source, stripe.Charge)


def pay_on_page(url, number, email="buyer@example.com"):
    """The customer's browser, without JavaScript, on the hosted Checkout page at `url`: the
    page, its one-time token, the form posted. The answer's status and Location (not followed)."""
    import re
    import urllib.error
    import urllib.parse
    import urllib.request

    class NoFollow(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    opener = urllib.request.build_opener(NoFollow)
    html = opener.open(url).read().decode()
    token = re.search(r'name="token" value="([^"]+)"', html).group(1)
    form = urllib.parse.urlencode({
        "token": token, "email": email, "card_number": number,
        "card_expiry": "12 / 34", "card_cvc": "123",
    }).encode()
    try:
        answer = opener.open(urllib.request.Request(url, data=form))
        return answer.status, None
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Location")


class Checkout(unittest.TestCase):
    def test_a_saas_signup_through_checkout_as_the_starters_build_it(self):
        product = stripe.Product.create(name="Team plan")
        price = stripe.Price.create(product=product.id, currency="usd", unit_amount=1200,
                                    recurring={"interval": "month"})
        session = stripe.checkout.Session.create(
            mode="subscription",
            line_items=[{"price": price.id, "quantity": 1}],
            success_url="https://saas.example/dashboard?session_id={CHECKOUT_SESSION_ID}",
            cancel_url="https://saas.example/pricing",
            customer_email="founder@example.com",
            client_reference_id="user_42",
            allow_promotion_codes=True,
            subscription_data={"trial_period_days": 14},
        )
        self.assertIsInstance(session, stripe.checkout.Session)
        self.assertEqual(session.status, "open")
        self.assertTrue(session.url.startswith("http"))

        status, location = pay_on_page(session.url, "4242424242424242")
        self.assertEqual(status, 303)
        self.assertEqual(location, f"https://saas.example/dashboard?session_id={session.id}")

        # The success page's server looks the session up, as the starters do.
        done = stripe.checkout.Session.retrieve(session.id, expand=["line_items", "subscription"])
        self.assertEqual(done.status, "complete")
        self.assertEqual(done.payment_status, "no_payment_required")
        self.assertEqual(done.client_reference_id, "user_42")
        self.assertEqual(done.customer_details.email, "founder@example.com")
        self.assertIsInstance(done.subscription, stripe.Subscription)
        self.assertEqual(done.subscription.status, "trialing")
        self.assertEqual(done.line_items.data[0].price.id, price.id)
        items = stripe.checkout.Session.list_line_items(session.id)
        self.assertEqual([i.quantity for i in items.auto_paging_iter()], [1])

    def test_a_one_off_payment_is_declined_then_paid_and_another_session_expires(self):
        session = stripe.checkout.Session.create(
            mode="payment",
            line_items=[{"price_data": {"currency": "eur", "unit_amount": 4500,
                                        "product_data": {"name": "Workshop ticket"}},
                         "quantity": 2}],
            success_url="https://shop.example/ok",
        )
        self.assertEqual(session.amount_total, 9000)
        status, _ = pay_on_page(session.url, "4000000000009995")
        self.assertEqual(status, 402)
        status, _ = pay_on_page(session.url, "4242424242424242")
        self.assertEqual(status, 303)
        paid = stripe.checkout.Session.retrieve(session.id, expand=["payment_intent"])
        self.assertEqual(paid.payment_status, "paid")
        self.assertEqual(paid.payment_intent.amount_received, 9000)
        found = stripe.checkout.Session.list(payment_intent=paid.payment_intent.id)
        self.assertEqual([s.id for s in found.data], [session.id])

        other = stripe.checkout.Session.create(
            mode="payment", line_items=[{"price_data": {"currency": "eur", "unit_amount": 100,
                                                        "product_data": {"name": "Sticker"}}}],
            success_url="https://shop.example/ok",
        )
        expired = stripe.checkout.Session.expire(other.id)
        self.assertEqual(expired.status, "expired")
        self.assertIsNone(expired.url)
        with self.assertRaises(stripe.InvalidRequestError):
            stripe.checkout.Session.expire(other.id)


class PaymentLinks(unittest.TestCase):
    def test_a_payment_link_opens_a_session_per_visit_and_can_be_switched_off(self):
        import urllib.error
        import urllib.request

        price = stripe.Price.create(currency="usd", unit_amount=2500, product_data={"name": "Zine"})
        link = stripe.PaymentLink.create(
            line_items=[{"price": price.id, "quantity": 2}],
            after_completion={"type": "redirect", "redirect": {"url": "https://zine.example/thanks"}},
            metadata={"issue": "7"},
        )
        self.assertIsInstance(link, stripe.PaymentLink)
        self.assertTrue(link.active)
        self.assertEqual(link.after_completion.redirect.url, "https://zine.example/thanks")
        items = stripe.PaymentLink.list_line_items(link.id)
        self.assertEqual([(i.price.id, i.quantity) for i in items.data], [(price.id, 2)])

        # A visit: on to a fresh session's page, paid there, then on to the shop.
        page = urllib.request.urlopen(link.url).geturl()
        self.assertIn("/checkout/cs_", page)
        status, location = pay_on_page(page, "4242424242424242")
        self.assertEqual((status, location), (303, "https://zine.example/thanks"))
        session = stripe.checkout.Session.list(limit=1).data[0]
        self.assertEqual(session.payment_link, link.id)
        self.assertEqual(session.amount_total, 5000)
        self.assertEqual(session.payment_status, "paid")

        off = stripe.PaymentLink.modify(link.id, active=False)
        self.assertFalse(off.active)
        with self.assertRaises(urllib.error.HTTPError) as gone:
            urllib.request.urlopen(link.url)
        self.assertEqual(gone.exception.code, 410)
        self.assertEqual([l.id for l in stripe.PaymentLink.list(active=False).data], [link.id])


class Webhooks(unittest.TestCase):
    def test_a_webhook_verifies_with_construct_event(self):
        received = []

        class Hook(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                received.append((body, self.headers.get("Stripe-Signature")))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args):
                pass

        server = http.server.HTTPServer(("127.0.0.1", 0), Hook)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            endpoint = stripe.WebhookEndpoint.create(
                url=f"http://127.0.0.1:{server.server_port}/hook",
                enabled_events=["payment_intent.succeeded", "charge.refunded"],
            )
            self.assertTrue(endpoint.secret.startswith("whsec_"))
            intent = stripe.PaymentIntent.create(amount=4200, currency="usd", payment_method="pm_card_visa", confirm=True)
            for _ in range(600):
                if received:
                    break
                time.sleep(0.05)
            self.assertTrue(received, "the webhook arrived")
            payload, signature = received[0]
            event = stripe.Webhook.construct_event(payload, signature, endpoint.secret)
            self.assertEqual(event.type, "payment_intent.succeeded")
            self.assertEqual(event.data.object.id, intent.id)
            self.assertEqual(event.data.object.amount_received, 4200)
            with self.assertRaises(stripe.SignatureVerificationError):
                stripe.Webhook.construct_event(payload, signature, "whsec_not_the_secret")
            self.assertEqual(stripe.Event.retrieve(event.id).type, "payment_intent.succeeded")
            # A refund is charge.refunded, the charge with what is refunded of it.
            stripe.Refund.create(payment_intent=intent.id, amount=1000)
            for _ in range(600):
                if len(received) > 1:
                    break
                time.sleep(0.05)
            refunded = stripe.Webhook.construct_event(received[1][0], received[1][1], endpoint.secret)
            self.assertEqual(refunded.type, "charge.refunded")
            self.assertIsInstance(refunded.data.object, stripe.Charge)
            self.assertEqual(
                (refunded.data.object.payment_intent, refunded.data.object.amount_refunded, refunded.data.object.refunded),
                (intent.id, 1000, False),
            )
            stripe.WebhookEndpoint.delete(endpoint.id)
        finally:
            server.shutdown()


class Lists(unittest.TestCase):
    def test_auto_pagination_walks_every_page(self):
        email = f"pages-{uuid.uuid4().hex[:8]}@example.com"
        customer = stripe.Customer.create(email=email)
        made = {
            stripe.PaymentIntent.create(
                amount=1000 + i, currency="usd", customer=customer.id, payment_method="pm_card_visa", confirm=True
            ).id
            for i in range(7)
        }
        walked = [pi.id for pi in stripe.PaymentIntent.list(customer=customer.id, limit=3).auto_paging_iter()]
        self.assertEqual(len(walked), 7)
        self.assertEqual(set(walked), made)
        charges = list(stripe.Charge.list(customer=customer.id, limit=2).auto_paging_iter())
        self.assertEqual(len(charges), 7)
        found = stripe.Customer.list(email=email)
        self.assertEqual([c.id for c in found.data], [customer.id])


class Errors(unittest.TestCase):
    def test_the_sdk_raises_its_matching_exception_classes(self):
        with self.assertRaises(stripe.InvalidRequestError) as caught:
            stripe.PaymentIntent.create(amount=1000, currency="usd", confirm=True, payment_method="pm_card_visa", shipping_rate="x")
        self.assertEqual((caught.exception.code, caught.exception.param), ("parameter_unknown", "shipping_rate"))
        with self.assertRaises(stripe.InvalidRequestError) as caught:
            stripe.PaymentIntent.retrieve("pi_000000000000000000000000")
        self.assertEqual((caught.exception.http_status, caught.exception.code), (404, "resource_missing"))
        with self.assertRaises(stripe.AuthenticationError):
            stripe.Customer.list(api_key="sk_test_notakey")
        key = str(uuid.uuid4())
        stripe.Customer.create(email="once@example.com", idempotency_key=key)
        again = stripe.Customer.create(email="once@example.com", idempotency_key=key)
        self.assertEqual(again.last_response.headers.get("Idempotent-Replayed"), "true")
        with self.assertRaises(stripe.IdempotencyError):
            stripe.Customer.create(email="twice@example.com", idempotency_key=key)
        with self.assertRaises(stripe.InvalidRequestError) as caught:
            stripe.Coupon.create(percent_off=10)
        self.assertEqual(caught.exception.http_status, 404)


class CardTesting(unittest.TestCase):
    def test_a_browser_trying_stolen_cards_is_stopped_and_the_shop_hears_an_early_fraud_warning(self):
        def browser_confirm(payment_method):
            # The shop's server makes the intent; the browser confirms it as tender.js does,
            # with the publishable key and the client secret.
            intent = stripe.PaymentIntent.create(amount=500, currency="usd", api_key=GUARD_SK)
            return stripe.PaymentIntent.confirm(
                intent.id, client_secret=intent.client_secret, payment_method=payment_method, api_key=GUARD_PK
            )

        for _ in range(10):
            with self.assertRaises(stripe.CardError):
                browser_confirm("pm_card_chargeDeclinedStolenCard")
        with self.assertRaises(stripe.RateLimitError) as caught:
            browser_confirm("pm_card_visa")
        # stripe-python's RateLimitError keeps the body's code on its `error`.
        self.assertEqual(caught.exception.error.code, "card_testing_blocked")
        # The shop's own server is not the browser: it still pays.
        paid = stripe.PaymentIntent.create(
            amount=500, currency="usd", confirm=True, payment_method="pm_card_visa", api_key=GUARD_SK
        )
        self.assertEqual(paid.status, "succeeded")
        # The address and the card reached their tenth decline together: two warnings.
        warnings = stripe.Event.list(type="radar.early_fraud_warning.created", api_key=GUARD_SK)
        self.assertEqual(len(warnings.data), 2)
        warning = warnings.data[0].data.object
        self.assertIsInstance(warning, stripe.radar.EarlyFraudWarning)
        self.assertEqual((warning.fraud_type, warning.actionable), ("misc", False))
        self.assertTrue(warning.payment_intent.startswith("pi_"))


class Client(unittest.TestCase):
    def test_the_stripe_client_with_retries_and_its_own_idempotency_keys(self):
        client = stripe.StripeClient(SK, base_addresses={"api": BASE}, max_network_retries=2)
        customer = client.v1.customers.create(params={"email": "client@example.com"})
        intent = client.v1.payment_intents.create(
            params={"amount": 3100, "currency": "usd", "customer": customer.id, "payment_method": "pm_card_visa", "confirm": True}
        )
        self.assertEqual(intent.status, "succeeded")
        self.assertEqual(client.v1.payment_intents.retrieve(intent.id).amount, 3100)
        self.assertEqual(client.v1.customers.delete(customer.id).deleted, True)


if __name__ == "__main__":
    unittest.main()
