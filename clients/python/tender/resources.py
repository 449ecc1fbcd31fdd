"""The API's resources, one class each, every endpoint a method (docs/api.md has what each
does). Parameters are keyword arguments typed by the generated :mod:`tender.models`; answers are
the API's objects as typed dicts. ``POST`` methods take ``idempotency_key=`` (one is generated
per call otherwise, the same on every retry)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Generator, cast

from typing_extensions import Unpack

from . import models
from .pagination import Page

if TYPE_CHECKING:
    from ._http import Transport


class Resource:
    def __init__(self, transport: Transport) -> None:
        self._t = transport


class Payments(Resource):
    """Card and bank-transfer payments."""

    def create(
        self, *, idempotency_key: str | None = None, **params: Unpack[models.PaymentCreate]
    ) -> models.Payment:
        return cast(
            "models.Payment",
            self._t.request("POST", "/payments", body=params, idempotency_key=idempotency_key),
        )

    def retrieve(self, id: str) -> models.Payment:
        return cast("models.Payment", self._t.request("GET", f"/payments/{id}"))

    def update(
        self, id: str, *, idempotency_key: str | None = None, **params: Unpack[models.PaymentUpdate]
    ) -> models.Payment:
        return cast(
            "models.Payment",
            self._t.request("POST", f"/payments/{id}", body=params, idempotency_key=idempotency_key),
        )

    def capture(
        self, id: str, *, idempotency_key: str | None = None, **params: Unpack[models.PaymentCapture]
    ) -> models.Payment:
        return cast(
            "models.Payment",
            self._t.request("POST", f"/payments/{id}/capture", body=params, idempotency_key=idempotency_key),
        )

    def cancel(
        self, id: str, *, idempotency_key: str | None = None, **params: Unpack[models.PaymentCancel]
    ) -> models.Payment:
        return cast(
            "models.Payment",
            self._t.request("POST", f"/payments/{id}/cancel", body=params, idempotency_key=idempotency_key),
        )

    def list(self, **params: Any) -> Page[models.Payment]:
        """One page (``limit``, ``starting_after``, ``ending_before``, ``created={"gte": …}``
        and the list's filters); ``.auto_paging_iter()`` walks every page."""
        return Page(self._t, "/payments", params)

class PaymentMethods(Resource):
    """Saved cards (tokenised with a publishable or secret key)."""

    def create(
        self, *, idempotency_key: str | None = None, **params: Unpack[models.PaymentMethodCreate]
    ) -> models.PaymentMethod:
        return cast(
            "models.PaymentMethod",
            self._t.request("POST", "/payment_methods", body=params, idempotency_key=idempotency_key),
        )

    def retrieve(self, id: str) -> models.PaymentMethod:
        return cast("models.PaymentMethod", self._t.request("GET", f"/payment_methods/{id}"))

    def attach(
        self, id: str, *, idempotency_key: str | None = None, **params: Unpack[models.PaymentMethodAttach]
    ) -> models.PaymentMethod:
        return cast(
            "models.PaymentMethod",
            self._t.request("POST", f"/payment_methods/{id}/attach", body=params, idempotency_key=idempotency_key),
        )

    def detach(
        self, id: str, *, idempotency_key: str | None = None, **params: Unpack[models.PaymentMethodDetach]
    ) -> models.PaymentMethod:
        return cast(
            "models.PaymentMethod",
            self._t.request("POST", f"/payment_methods/{id}/detach", body=params, idempotency_key=idempotency_key),
        )

    def list(self, **params: Any) -> Page[models.PaymentMethod]:
        """One page (``limit``, ``starting_after``, ``ending_before``, ``created={"gte": …}``
        and the list's filters); ``.auto_paging_iter()`` walks every page."""
        return Page(self._t, "/payment_methods", params)

class Customers(Resource):
    """Customers."""

    def create(
        self, *, idempotency_key: str | None = None, **params: Unpack[models.CustomerCreate]
    ) -> models.Customer:
        return cast(
            "models.Customer",
            self._t.request("POST", "/customers", body=params, idempotency_key=idempotency_key),
        )

    def retrieve(self, id: str) -> models.Customer:
        return cast("models.Customer", self._t.request("GET", f"/customers/{id}"))

    def update(
        self, id: str, *, idempotency_key: str | None = None, **params: Unpack[models.CustomerFields]
    ) -> models.Customer:
        return cast(
            "models.Customer",
            self._t.request("POST", f"/customers/{id}", body=params, idempotency_key=idempotency_key),
        )

    def delete(self, id: str) -> models.DeletedCustomer:
        return cast("models.DeletedCustomer", self._t.request("DELETE", f"/customers/{id}"))

    def list(self, **params: Any) -> Page[models.Customer]:
        """One page (``limit``, ``starting_after``, ``ending_before``, ``created={"gte": …}``
        and the list's filters); ``.auto_paging_iter()`` walks every page."""
        return Page(self._t, "/customers", params)

class Refunds(Resource):
    """Refunds of payments, whole or in parts."""

    def create(
        self, *, idempotency_key: str | None = None, **params: Unpack[models.RefundCreate]
    ) -> models.Refund:
        return cast(
            "models.Refund",
            self._t.request("POST", "/refunds", body=params, idempotency_key=idempotency_key),
        )

    def retrieve(self, id: str) -> models.Refund:
        return cast("models.Refund", self._t.request("GET", f"/refunds/{id}"))

    def update(
        self, id: str, *, idempotency_key: str | None = None, **params: Unpack[models.RefundUpdate]
    ) -> models.Refund:
        return cast(
            "models.Refund",
            self._t.request("POST", f"/refunds/{id}", body=params, idempotency_key=idempotency_key),
        )

    def list(self, **params: Any) -> Page[models.Refund]:
        """One page (``limit``, ``starting_after``, ``ending_before``, ``created={"gte": …}``
        and the list's filters); ``.auto_paging_iter()`` walks every page."""
        return Page(self._t, "/refunds", params)

class Events(Resource):
    """Events, the account's history; each is sent to the matching webhook endpoints."""

    def retrieve(self, id: str) -> models.Event:
        return cast("models.Event", self._t.request("GET", f"/events/{id}"))

    def list(self, **params: Any) -> Page[models.Event]:
        """One page (``limit``, ``starting_after``, ``ending_before``, ``created={"gte": …}``
        and the list's filters); ``.auto_paging_iter()`` walks every page."""
        return Page(self._t, "/events", params)

    def stream(self, after: str | None = None) -> Generator[models.Event, None, None]:
        """The account's new events as they are committed, oldest first, over one connection
        (``GET /events/stream``): those after the event ``after`` names (the last one you saw),
        else those after the newest at connection time. It blocks between events and ends with
        :class:`tender.errors.APIConnectionError` when the connection drops: call again with the
        last id you saw, and nothing is missed."""
        for _, data in self._t.stream("/events/stream", last_event_id=after):
            yield cast("models.Event", json.loads(data))

    def list_deliveries(self, id: str, **params: Any) -> Page[models.WebhookDelivery]:
        """One page (``limit``, ``starting_after``, ``ending_before``, ``created={"gte": …}``
        and the list's filters); ``.auto_paging_iter()`` walks every page."""
        return Page(self._t, f"/events/{id}/deliveries", params)

    def resend(
        self, id: str, *, idempotency_key: str | None = None, **params: Unpack[models.EventResend]
    ) -> models.WebhookDelivery:
        return cast(
            "models.WebhookDelivery",
            self._t.request("POST", f"/events/{id}/resend", body=params, idempotency_key=idempotency_key),
        )

class WebhookEndpoints(Resource):
    """Where events are sent."""

    def create(
        self, *, idempotency_key: str | None = None, **params: Unpack[models.WebhookEndpointCreate]
    ) -> models.WebhookEndpointWithSecret:
        return cast(
            "models.WebhookEndpointWithSecret",
            self._t.request("POST", "/webhook_endpoints", body=params, idempotency_key=idempotency_key),
        )

    def retrieve(self, id: str) -> models.WebhookEndpoint:
        return cast("models.WebhookEndpoint", self._t.request("GET", f"/webhook_endpoints/{id}"))

    def update(
        self, id: str, *, idempotency_key: str | None = None, **params: Unpack[models.WebhookEndpointUpdate]
    ) -> models.WebhookEndpoint:
        return cast(
            "models.WebhookEndpoint",
            self._t.request("POST", f"/webhook_endpoints/{id}", body=params, idempotency_key=idempotency_key),
        )

    def delete(self, id: str) -> models.DeletedWebhookEndpoint:
        return cast("models.DeletedWebhookEndpoint", self._t.request("DELETE", f"/webhook_endpoints/{id}"))

    def roll_secret(
        self, id: str, *, idempotency_key: str | None = None, **params: Unpack[models.WebhookEndpointRollSecret]
    ) -> models.WebhookEndpointWithSecret:
        return cast(
            "models.WebhookEndpointWithSecret",
            self._t.request("POST", f"/webhook_endpoints/{id}/roll_secret", body=params, idempotency_key=idempotency_key),
        )

    def list(self, **params: Any) -> Page[models.WebhookEndpoint]:
        """One page (``limit``, ``starting_after``, ``ending_before``, ``created={"gte": …}``
        and the list's filters); ``.auto_paging_iter()`` walks every page."""
        return Page(self._t, "/webhook_endpoints", params)

class Connectors(Resource):
    """Real processors behind the API."""

    def create(
        self, *, idempotency_key: str | None = None, **params: Unpack[models.ConnectorCreate]
    ) -> models.Connector:
        return cast(
            "models.Connector",
            self._t.request("POST", "/connectors", body=params, idempotency_key=idempotency_key),
        )

    def retrieve(self, id: str) -> models.Connector:
        return cast("models.Connector", self._t.request("GET", f"/connectors/{id}"))

    def update(
        self, id: str, *, idempotency_key: str | None = None, **params: Unpack[models.ConnectorUpdate]
    ) -> models.Connector:
        return cast(
            "models.Connector",
            self._t.request("POST", f"/connectors/{id}", body=params, idempotency_key=idempotency_key),
        )

    def delete(self, id: str) -> models.DeletedConnector:
        return cast("models.DeletedConnector", self._t.request("DELETE", f"/connectors/{id}"))

    def list(self, **params: Any) -> Page[models.Connector]:
        """One page (``limit``, ``starting_after``, ``ending_before``, ``created={"gte": …}``
        and the list's filters); ``.auto_paging_iter()`` walks every page."""
        return Page(self._t, "/connectors", params)

class BalanceTransactions(Resource):
    """Every movement of the balance."""

    def retrieve(self, id: str) -> models.BalanceTransaction:
        return cast("models.BalanceTransaction", self._t.request("GET", f"/balance_transactions/{id}"))

    def list(self, **params: Any) -> Page[models.BalanceTransaction]:
        """One page (``limit``, ``starting_after``, ``ending_before``, ``created={"gte": …}``
        and the list's filters); ``.auto_paging_iter()`` walks every page."""
        return Page(self._t, "/balance_transactions", params)

class Payouts(Resource):
    """Money sent from the balance to the merchant's bank account."""

    def create(
        self, *, idempotency_key: str | None = None, **params: Unpack[models.PayoutCreate]
    ) -> models.Payout:
        return cast(
            "models.Payout",
            self._t.request("POST", "/payouts", body=params, idempotency_key=idempotency_key),
        )

    def retrieve(self, id: str) -> models.Payout:
        return cast("models.Payout", self._t.request("GET", f"/payouts/{id}"))

    def cancel(
        self, id: str, *, idempotency_key: str | None = None, **params: Unpack[models.PayoutCancel]
    ) -> models.Payout:
        return cast(
            "models.Payout",
            self._t.request("POST", f"/payouts/{id}/cancel", body=params, idempotency_key=idempotency_key),
        )

    def list(self, **params: Any) -> Page[models.Payout]:
        """One page (``limit``, ``starting_after``, ``ending_before``, ``created={"gte": …}``
        and the list's filters); ``.auto_paging_iter()`` walks every page."""
        return Page(self._t, "/payouts", params)

class Disputes(Resource):
    """Chargebacks, and the evidence against them."""

    def retrieve(self, id: str) -> models.Dispute:
        return cast("models.Dispute", self._t.request("GET", f"/disputes/{id}"))

    def update(
        self, id: str, *, idempotency_key: str | None = None, **params: Unpack[models.DisputeUpdate]
    ) -> models.Dispute:
        return cast(
            "models.Dispute",
            self._t.request("POST", f"/disputes/{id}", body=params, idempotency_key=idempotency_key),
        )

    def close(
        self, id: str, *, idempotency_key: str | None = None, **params: Unpack[models.DisputeClose]
    ) -> models.Dispute:
        return cast(
            "models.Dispute",
            self._t.request("POST", f"/disputes/{id}/close", body=params, idempotency_key=idempotency_key),
        )

    def list(self, **params: Any) -> Page[models.Dispute]:
        """One page (``limit``, ``starting_after``, ``ending_before``, ``created={"gte": …}``
        and the list's filters); ``.auto_paging_iter()`` walks every page."""
        return Page(self._t, "/disputes", params)

class Products(Resource):
    """What subscriptions sell."""

    def create(
        self, *, idempotency_key: str | None = None, **params: Unpack[models.ProductCreate]
    ) -> models.Product:
        return cast(
            "models.Product",
            self._t.request("POST", "/products", body=params, idempotency_key=idempotency_key),
        )

    def retrieve(self, id: str) -> models.Product:
        return cast("models.Product", self._t.request("GET", f"/products/{id}"))

    def update(
        self, id: str, *, idempotency_key: str | None = None, **params: Unpack[models.ProductUpdate]
    ) -> models.Product:
        return cast(
            "models.Product",
            self._t.request("POST", f"/products/{id}", body=params, idempotency_key=idempotency_key),
        )

    def delete(self, id: str) -> models.DeletedProduct:
        return cast("models.DeletedProduct", self._t.request("DELETE", f"/products/{id}"))

    def list(self, **params: Any) -> Page[models.Product]:
        """One page (``limit``, ``starting_after``, ``ending_before``, ``created={"gte": …}``
        and the list's filters); ``.auto_paging_iter()`` walks every page."""
        return Page(self._t, "/products", params)

class Prices(Resource):
    """A product's price and billing interval."""

    def create(
        self, *, idempotency_key: str | None = None, **params: Unpack[models.PriceCreate]
    ) -> models.Price:
        return cast(
            "models.Price",
            self._t.request("POST", "/prices", body=params, idempotency_key=idempotency_key),
        )

    def retrieve(self, id: str) -> models.Price:
        return cast("models.Price", self._t.request("GET", f"/prices/{id}"))

    def update(
        self, id: str, *, idempotency_key: str | None = None, **params: Unpack[models.PriceUpdate]
    ) -> models.Price:
        return cast(
            "models.Price",
            self._t.request("POST", f"/prices/{id}", body=params, idempotency_key=idempotency_key),
        )

    def list(self, **params: Any) -> Page[models.Price]:
        """One page (``limit``, ``starting_after``, ``ending_before``, ``created={"gte": …}``
        and the list's filters); ``.auto_paging_iter()`` walks every page."""
        return Page(self._t, "/prices", params)

class Subscriptions(Resource):
    """Recurring billing of a customer."""

    def create(
        self, *, idempotency_key: str | None = None, **params: Unpack[models.SubscriptionCreate]
    ) -> models.Subscription:
        return cast(
            "models.Subscription",
            self._t.request("POST", "/subscriptions", body=params, idempotency_key=idempotency_key),
        )

    def retrieve(self, id: str) -> models.Subscription:
        return cast("models.Subscription", self._t.request("GET", f"/subscriptions/{id}"))

    def update(
        self, id: str, *, idempotency_key: str | None = None, **params: Unpack[models.SubscriptionUpdate]
    ) -> models.Subscription:
        return cast(
            "models.Subscription",
            self._t.request("POST", f"/subscriptions/{id}", body=params, idempotency_key=idempotency_key),
        )

    def cancel(self, id: str) -> models.Subscription:
        return cast("models.Subscription", self._t.request("DELETE", f"/subscriptions/{id}"))

    def resume(self, id: str, *, idempotency_key: str | None = None) -> models.Subscription:
        """A paused subscription starts a new period now; its invoice is tried at once."""
        return cast(
            "models.Subscription",
            self._t.request("POST", f"/subscriptions/{id}/resume", idempotency_key=idempotency_key),
        )

    def list(self, **params: Any) -> Page[models.Subscription]:
        """One page (``limit``, ``starting_after``, ``ending_before``, ``created={"gte": …}``
        and the list's filters); ``.auto_paging_iter()`` walks every page."""
        return Page(self._t, "/subscriptions", params)

class Invoices(Resource):
    """A subscription's bills."""

    def retrieve(self, id: str) -> models.Invoice:
        return cast("models.Invoice", self._t.request("GET", f"/invoices/{id}"))

    def pay(
        self, id: str, *, idempotency_key: str | None = None, **params: Unpack[models.InvoicePay]
    ) -> models.Invoice:
        return cast(
            "models.Invoice",
            self._t.request("POST", f"/invoices/{id}/pay", body=params, idempotency_key=idempotency_key),
        )

    def void(self, id: str, *, idempotency_key: str | None = None) -> models.Invoice:
        return cast(
            "models.Invoice",
            self._t.request("POST", f"/invoices/{id}/void", idempotency_key=idempotency_key),
        )

    def list(self, **params: Any) -> Page[models.Invoice]:
        """One page (``limit``, ``starting_after``, ``ending_before``, ``created={"gte": …}``
        and the list's filters); ``.auto_paging_iter()`` walks every page."""
        return Page(self._t, "/invoices", params)

class TestClocks(Resource):
    """Test-mode clocks that move billing through time."""

    def create(
        self, *, idempotency_key: str | None = None, **params: Unpack[models.TestClockCreate]
    ) -> models.TestClock:
        return cast(
            "models.TestClock",
            self._t.request("POST", "/test_helpers/test_clocks", body=params, idempotency_key=idempotency_key),
        )

    def retrieve(self, id: str) -> models.TestClock:
        return cast("models.TestClock", self._t.request("GET", f"/test_helpers/test_clocks/{id}"))

    def delete(self, id: str) -> models.DeletedTestClock:
        return cast("models.DeletedTestClock", self._t.request("DELETE", f"/test_helpers/test_clocks/{id}"))

    def advance(
        self, id: str, *, idempotency_key: str | None = None, **params: Unpack[models.TestClockAdvance]
    ) -> models.TestClock:
        return cast(
            "models.TestClock",
            self._t.request("POST", f"/test_helpers/test_clocks/{id}/advance", body=params, idempotency_key=idempotency_key),
        )

    def list(self, **params: Any) -> Page[models.TestClock]:
        """One page (``limit``, ``starting_after``, ``ending_before``, ``created={"gte": …}``
        and the list's filters); ``.auto_paging_iter()`` walks every page."""
        return Page(self._t, "/test_helpers/test_clocks", params)


class Balance(Resource):
    """The account's balance: available and pending, per currency."""

    def retrieve(self) -> models.Balance:
        return cast("models.Balance", self._t.request("GET", "/balance"))
