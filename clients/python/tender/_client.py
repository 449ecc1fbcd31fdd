"""The entry point: ``Tender(api_key)`` with one attribute per resource."""

from __future__ import annotations

import httpx

from ._http import RetryPolicy, Transport
from .resources import (
    Balance,
    BalanceTransactions,
    Connectors,
    Customers,
    Disputes,
    Events,
    Invoices,
    PaymentMethods,
    Payments,
    Payouts,
    Prices,
    Products,
    Refunds,
    Subscriptions,
    TestClocks,
    WebhookEndpoints,
)

DEFAULT_BASE_URL = "http://127.0.0.1:4242"


class Tender:
    """A client of one Tender account and mode (the key decides which).

    >>> tender = Tender("sk_test_…")
    >>> payment = tender.payments.create(amount=2500, currency="usd", payment_method=...)
    """

    def __init__(
        self,
        api_key: str,
        *,
        base_url: str = DEFAULT_BASE_URL,
        retry: RetryPolicy | None = None,
        timeout: float = 30.0,
        http_client: httpx.Client | None = None,
    ) -> None:
        t = Transport(
            api_key,
            base_url,
            retry=retry or RetryPolicy(),
            timeout=timeout,
            http_client=http_client,
        )
        self._transport = t
        self.payments = Payments(t)
        self.payment_methods = PaymentMethods(t)
        self.customers = Customers(t)
        self.refunds = Refunds(t)
        self.events = Events(t)
        self.webhook_endpoints = WebhookEndpoints(t)
        self.connectors = Connectors(t)
        self.balance = Balance(t)
        self.balance_transactions = BalanceTransactions(t)
        self.payouts = Payouts(t)
        self.disputes = Disputes(t)
        self.products = Products(t)
        self.prices = Prices(t)
        self.subscriptions = Subscriptions(t)
        self.invoices = Invoices(t)
        self.test_clocks = TestClocks(t)

    def close(self) -> None:
        self._transport.http.close()

    def __enter__(self) -> Tender:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
