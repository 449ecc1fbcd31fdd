# Generated from docs/openapi.json by clients/python/scripts/generate.sh (datamodel-code-generator); do not edit.

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypeAlias

from typing_extensions import TypedDict


class ErrorDetail(TypedDict, closed=True):
    """
    What went wrong: its type, machine-readable code, message and the parameter at fault.
    """

    type: Literal['invalid_request_error', 'idempotency_error', 'authentication_error', 'card_error', 'permission_error', 'rate_limit_error', 'api_error']
    code: str
    message: str
    param: NotRequired[str]
    decline_code: NotRequired[str]
    payment: NotRequired[str]
    request_id: str
    setup_intent: NotRequired[str]


class Error(TypedDict, closed=True):
    """
    What went wrong: its type, machine-readable code, message and the parameter at fault.
    """

    type: Literal['invalid_request_error', 'idempotency_error', 'authentication_error', 'card_error', 'permission_error', 'rate_limit_error', 'api_error', 'invalid_request_error', 'idempotency_error']
    code: str
    message: str
    param: NotRequired[str]
    decline_code: NotRequired[str]
    payment: NotRequired[str]
    request_id: str
    setup_intent: NotRequired[str]


class Error1(TypedDict, closed=True):
    """
    What went wrong: its type, machine-readable code, message and the parameter at fault.
    """

    type: Literal['invalid_request_error', 'idempotency_error', 'authentication_error', 'card_error', 'permission_error', 'rate_limit_error', 'api_error', 'authentication_error']
    code: Literal['api_key_missing', 'api_key_invalid', 'api_key_expired']
    message: str
    param: NotRequired[str]
    decline_code: NotRequired[str]
    payment: NotRequired[str]
    request_id: str
    setup_intent: NotRequired[str]


class Error2(TypedDict, closed=True):
    """
    What went wrong: its type, machine-readable code, message and the parameter at fault.
    """

    type: Literal['invalid_request_error', 'idempotency_error', 'authentication_error', 'card_error', 'permission_error', 'rate_limit_error', 'api_error', 'card_error']
    code: str
    message: str
    param: NotRequired[str]
    decline_code: NotRequired[str]
    payment: NotRequired[str]
    request_id: str
    setup_intent: NotRequired[str]


class Error3(TypedDict, closed=True):
    """
    What went wrong: its type, machine-readable code, message and the parameter at fault.
    """

    type: Literal['invalid_request_error', 'idempotency_error', 'authentication_error', 'card_error', 'permission_error', 'rate_limit_error', 'api_error', 'permission_error']
    code: Literal['secret_key_required']
    message: str
    param: NotRequired[str]
    decline_code: NotRequired[str]
    payment: NotRequired[str]
    request_id: str
    setup_intent: NotRequired[str]


class Error4(TypedDict, closed=True):
    """
    What went wrong: its type, machine-readable code, message and the parameter at fault.
    """

    type: Literal['invalid_request_error', 'idempotency_error', 'authentication_error', 'card_error', 'permission_error', 'rate_limit_error', 'api_error', 'invalid_request_error']
    code: Literal['resource_missing']
    message: str
    param: NotRequired[str]
    decline_code: NotRequired[str]
    payment: NotRequired[str]
    request_id: str
    setup_intent: NotRequired[str]


class Error5(TypedDict, closed=True):
    """
    What went wrong: its type, machine-readable code, message and the parameter at fault.
    """

    type: Literal['invalid_request_error', 'idempotency_error', 'authentication_error', 'card_error', 'permission_error', 'rate_limit_error', 'api_error', 'idempotency_error']
    code: Literal['idempotency_key_in_use']
    message: str
    param: NotRequired[str]
    decline_code: NotRequired[str]
    payment: NotRequired[str]
    request_id: str
    setup_intent: NotRequired[str]


class Error6(TypedDict, closed=True):
    """
    What went wrong: its type, machine-readable code, message and the parameter at fault.
    """

    type: Literal['invalid_request_error', 'idempotency_error', 'authentication_error', 'card_error', 'permission_error', 'rate_limit_error', 'api_error', 'invalid_request_error']
    code: Literal['body_too_large']
    message: str
    param: NotRequired[str]
    decline_code: NotRequired[str]
    payment: NotRequired[str]
    request_id: str
    setup_intent: NotRequired[str]


class Error7(TypedDict, closed=True):
    """
    What went wrong: its type, machine-readable code, message and the parameter at fault.
    """

    type: Literal['invalid_request_error', 'idempotency_error', 'authentication_error', 'card_error', 'permission_error', 'rate_limit_error', 'api_error', 'invalid_request_error']
    code: Literal['unsupported_media_type']
    message: str
    param: NotRequired[str]
    decline_code: NotRequired[str]
    payment: NotRequired[str]
    request_id: str
    setup_intent: NotRequired[str]


class Error8(TypedDict, closed=True):
    """
    What went wrong: its type, machine-readable code, message and the parameter at fault.
    """

    type: Literal['invalid_request_error', 'idempotency_error', 'authentication_error', 'card_error', 'permission_error', 'rate_limit_error', 'api_error', 'rate_limit_error']
    code: Literal['rate_limit']
    message: str
    param: NotRequired[str]
    decline_code: NotRequired[str]
    payment: NotRequired[str]
    request_id: str
    setup_intent: NotRequired[str]


class Error9(TypedDict, closed=True):
    """
    What went wrong: its type, machine-readable code, message and the parameter at fault.
    """

    type: Literal['invalid_request_error', 'idempotency_error', 'authentication_error', 'card_error', 'permission_error', 'rate_limit_error', 'api_error', 'api_error']
    code: str
    message: str
    param: NotRequired[str]
    decline_code: NotRequired[str]
    payment: NotRequired[str]
    request_id: str
    setup_intent: NotRequired[str]


Metadata: TypeAlias = dict[str, str]


MetadataParam: TypeAlias = dict[str, str | None]


Currency: TypeAlias = str


CardBrand: TypeAlias = Literal['visa', 'mastercard', 'amex', 'discover', 'diners', 'jcb', 'unionpay', 'unknown']


class CardDetails(TypedDict, closed=True):
    """
    A card as shown: never the full number, never the CVC.
    """

    brand: CardBrand
    last4: str
    exp_month: int
    exp_year: int
    fingerprint: str
    country: str
    funding: Literal['credit', 'debit', 'prepaid', 'unknown']


class BankTransferDetails(TypedDict, closed=True):
    """
    A bank account as shown: never the full IBAN.
    """

    last4: str
    country: str
    account_holder_name: str


class PaymentMethodSnapshot(TypedDict, closed=True):
    """
    The payment method as charged: `card` for cards, `bank_transfer` for bank transfers, `connector_token` for a processor's own payment method.
    """

    id: str
    type: Literal['card', 'bank_transfer', 'connector_token']
    card: NotRequired[CardDetails]
    bank_transfer: NotRequired[BankTransferDetails]
    connector_token: NotRequired[str]


class Address(TypedDict, closed=True):
    line1: str | None
    line2: str | None
    city: str | None
    state: str | None
    postal_code: str | None
    country: str | None


class InvoiceSettings(TypedDict, closed=True):
    """
    How invoices are paid: the card a subscription's invoice is charged to when the subscription names none (else the card saved last).
    """

    default_payment_method: str | None


class Customer(TypedDict, closed=True):
    id: str
    object: Literal['customer']
    email: str | None
    name: str | None
    phone: str | None
    address: Address | None
    description: str | None
    metadata: Metadata
    invoice_settings: InvoiceSettings
    livemode: bool
    created: int
    test_clock: NotRequired[str | None]


class DeletedCustomer(TypedDict, closed=True):
    id: str
    object: Literal['customer']
    deleted: Literal[True]


class Refund(TypedDict, closed=True):
    id: str
    object: Literal['refund']
    amount: int
    currency: Currency
    payment: str
    status: Literal['pending', 'succeeded', 'failed']
    reason: Literal['duplicate', 'fraudulent', 'requested_by_customer'] | None
    metadata: Metadata
    livemode: bool
    created: int
    connector: NotRequired[str | None]
    connector_reference: NotRequired[str | None]
    balance_transaction: NotRequired[str | None]
    failure_balance_transaction: NotRequired[str | None]


class PaymentMethod(TypedDict, closed=True):
    id: str
    object: Literal['payment_method']
    type: Literal['card']
    card: CardDetails
    customer: str | None
    connector: str | None
    metadata: Metadata
    livemode: bool
    created: int


EventType: TypeAlias = Literal['payment.created', 'payment.succeeded', 'payment.failed', 'payment.canceled', 'payment.updated', 'payment.requires_action', 'payment.requires_capture', 'payment.processing', 'payment.captured', 'payment.refunded', 'payment_method.attached', 'payment_method.detached', 'refund.created', 'refund.updated', 'customer.created', 'customer.updated', 'customer.deleted', 'payout.created', 'payout.updated', 'payout.paid', 'payout.failed', 'payout.canceled', 'dispute.created', 'dispute.updated', 'dispute.closed', 'product.created', 'product.updated', 'product.deleted', 'price.created', 'price.updated', 'customer.subscription.created', 'customer.subscription.updated', 'customer.subscription.deleted', 'customer.subscription.trial_will_end', 'customer.subscription.paused', 'customer.subscription.resumed', 'invoice.created', 'invoice.finalized', 'invoice.paid', 'invoice.payment_failed', 'invoice.voided', 'invoice.marked_uncollectible', 'invoice.upcoming', 'test_helpers.test_clock.ready', 'setup_intent.created', 'setup_intent.succeeded', 'setup_intent.setup_failed', 'setup_intent.canceled', 'checkout_session.completed', 'checkout_session.expired', 'payment_link.created', 'payment_link.updated', 'balance.available', 'risk.blocked']


class Request(TypedDict, closed=True):
    """
    The API request that caused the event; null fields for changes not made through the API.
    """

    id: str | None
    idempotency_key: str | None


class WebhookEndpoint(TypedDict, closed=True):
    id: str
    object: Literal['webhook_endpoint']
    url: str
    enabled_events: list[Literal['payment.created', 'payment.succeeded', 'payment.failed', 'payment.canceled', 'payment.updated', 'payment.requires_action', 'payment.requires_capture', 'payment.processing', 'payment.captured', 'payment.refunded', 'payment_method.attached', 'payment_method.detached', 'refund.created', 'refund.updated', 'customer.created', 'customer.updated', 'customer.deleted', 'payout.created', 'payout.updated', 'payout.paid', 'payout.failed', 'payout.canceled', 'dispute.created', 'dispute.updated', 'dispute.closed', 'product.created', 'product.updated', 'product.deleted', 'price.created', 'price.updated', 'customer.subscription.created', 'customer.subscription.updated', 'customer.subscription.deleted', 'customer.subscription.trial_will_end', 'customer.subscription.paused', 'customer.subscription.resumed', 'invoice.created', 'invoice.finalized', 'invoice.paid', 'invoice.payment_failed', 'invoice.voided', 'invoice.marked_uncollectible', 'invoice.upcoming', 'test_helpers.test_clock.ready', 'setup_intent.created', 'setup_intent.succeeded', 'setup_intent.setup_failed', 'setup_intent.canceled', 'checkout_session.completed', 'checkout_session.expired', 'payment_link.created', 'payment_link.updated', 'balance.available', 'risk.blocked', '*', 'payment_intent.created', 'payment_intent.succeeded', 'charge.succeeded', 'payment_intent.payment_failed', 'charge.failed', 'payment_intent.canceled', 'charge.updated', 'payment_intent.requires_action', 'payment_intent.amount_capturable_updated', 'payment_intent.processing', 'charge.captured', 'charge.refunded', 'charge.refund.updated', 'charge.dispute.created', 'charge.dispute.updated', 'charge.dispute.closed', 'invoice.payment_succeeded', 'checkout.session.completed', 'checkout.session.expired', 'radar.early_fraud_warning.created']]
    description: str | None
    status: Literal['enabled', 'disabled']
    livemode: bool
    created: int
    dialect: NotRequired[Literal['stripe']]


class WebhookEndpointWithSecret(TypedDict, closed=True):
    """
    The endpoint with its signing secret: only in the responses of creation and of `roll_secret`.
    """

    id: str
    object: Literal['webhook_endpoint']
    url: str
    enabled_events: list[Literal['payment.created', 'payment.succeeded', 'payment.failed', 'payment.canceled', 'payment.updated', 'payment.requires_action', 'payment.requires_capture', 'payment.processing', 'payment.captured', 'payment.refunded', 'payment_method.attached', 'payment_method.detached', 'refund.created', 'refund.updated', 'customer.created', 'customer.updated', 'customer.deleted', 'payout.created', 'payout.updated', 'payout.paid', 'payout.failed', 'payout.canceled', 'dispute.created', 'dispute.updated', 'dispute.closed', 'product.created', 'product.updated', 'product.deleted', 'price.created', 'price.updated', 'customer.subscription.created', 'customer.subscription.updated', 'customer.subscription.deleted', 'customer.subscription.trial_will_end', 'customer.subscription.paused', 'customer.subscription.resumed', 'invoice.created', 'invoice.finalized', 'invoice.paid', 'invoice.payment_failed', 'invoice.voided', 'invoice.marked_uncollectible', 'invoice.upcoming', 'test_helpers.test_clock.ready', 'setup_intent.created', 'setup_intent.succeeded', 'setup_intent.setup_failed', 'setup_intent.canceled', 'checkout_session.completed', 'checkout_session.expired', 'payment_link.created', 'payment_link.updated', 'balance.available', 'risk.blocked', '*', 'payment_intent.created', 'payment_intent.succeeded', 'charge.succeeded', 'payment_intent.payment_failed', 'charge.failed', 'payment_intent.canceled', 'charge.updated', 'payment_intent.requires_action', 'payment_intent.amount_capturable_updated', 'payment_intent.processing', 'charge.captured', 'charge.refunded', 'charge.refund.updated', 'charge.dispute.created', 'charge.dispute.updated', 'charge.dispute.closed', 'invoice.payment_succeeded', 'checkout.session.completed', 'checkout.session.expired', 'radar.early_fraud_warning.created']]
    description: str | None
    status: Literal['enabled', 'disabled']
    livemode: bool
    created: int
    dialect: NotRequired[Literal['stripe']]
    secret: str


class DeletedWebhookEndpoint(TypedDict, closed=True):
    id: str
    object: Literal['webhook_endpoint']
    deleted: Literal[True]


class Attempt(TypedDict, closed=True):
    attempted_at: int
    response_status: int | None
    error: str | None
    duration_ms: int
    response_body: str


class WebhookDelivery(TypedDict, closed=True):
    id: str
    object: Literal['webhook_delivery']
    event: str
    webhook_endpoint: str
    status: Literal['pending', 'succeeded', 'failed']
    next_attempt_at: int | None
    attempts: list[Attempt]


class CustomerList(TypedDict, closed=True):
    object: Literal['list']
    data: list[Customer]
    has_more: bool
    url: Literal['/v2/customers']


class RefundList(TypedDict, closed=True):
    object: Literal['list']
    data: list[Refund]
    has_more: bool
    url: Literal['/v2/refunds']


class PaymentMethodList(TypedDict, closed=True):
    object: Literal['list']
    data: list[PaymentMethod]
    has_more: bool
    url: Literal['/v2/payment_methods']


class WebhookEndpointList(TypedDict, closed=True):
    object: Literal['list']
    data: list[WebhookEndpoint]
    has_more: bool
    url: Literal['/v2/webhook_endpoints']


class WebhookDeliveryList(TypedDict, closed=True):
    object: Literal['list']
    data: list[WebhookDelivery]
    has_more: bool
    url: str


class CardInput(TypedDict, closed=True):
    """
    Raw card data. Invalid data is a 402 `card_error` (`incorrect_number`, `invalid_expiry_month`, `invalid_expiry_year`, `expired_card`, `invalid_cvc`), not a 400.
    """

    number: str
    exp_month: int
    exp_year: int
    cvc: str


class CardPaymentMethodInput(TypedDict, closed=True):
    type: Literal['card']
    card: CardInput


class BankTransfer(TypedDict, closed=True):
    iban: str
    account_holder_name: str


class BankTransferPaymentMethodInput(TypedDict, closed=True):
    type: Literal['bank_transfer']
    bank_transfer: BankTransfer


class PaymentUpdate(TypedDict, closed=True):
    description: NotRequired[str | None]
    metadata: NotRequired[MetadataParam]
    customer: NotRequired[str | None]


class PaymentCapture(TypedDict, closed=True):
    amount: NotRequired[int | None]


class PaymentCancel(TypedDict, closed=True):
    cancellation_reason: NotRequired[Literal['duplicate', 'fraudulent', 'requested_by_customer', 'abandoned'] | None]


class PaymentMethodCreate(TypedDict, closed=True):
    type: Literal['card', 'connector_token']
    card: NotRequired[CardInput]
    connector_token: NotRequired[str]
    customer: NotRequired[str]
    metadata: NotRequired[MetadataParam]


class PaymentMethodAttach(TypedDict, closed=True):
    customer: str


class PaymentMethodDetach(TypedDict, closed=True):
    pass


class AddressParam(TypedDict, closed=True):
    """
    null clears the address.
    """

    line1: NotRequired[str | None]
    line2: NotRequired[str | None]
    city: NotRequired[str | None]
    state: NotRequired[str | None]
    postal_code: NotRequired[str | None]
    country: NotRequired[str | None]


class CustomerFields(TypedDict, closed=True):
    """
    All optional. On update, null or `""` clears a field.
    """

    email: NotRequired[str | None]
    name: NotRequired[str | None]
    phone: NotRequired[str | None]
    address: NotRequired[AddressParam | None]
    description: NotRequired[str | None]
    metadata: NotRequired[MetadataParam]


class RefundCreate(TypedDict, closed=True):
    payment: str
    amount: NotRequired[int | None]
    reason: NotRequired[Literal['duplicate', 'fraudulent', 'requested_by_customer'] | None]
    metadata: NotRequired[MetadataParam]


class RefundUpdate(TypedDict, closed=True):
    metadata: NotRequired[MetadataParam]


class EventResend(TypedDict, closed=True):
    webhook_endpoint: str


class WebhookEndpointCreate(TypedDict, closed=True):
    url: str
    enabled_events: list[Literal['payment.created', 'payment.succeeded', 'payment.failed', 'payment.canceled', 'payment.updated', 'payment.requires_action', 'payment.requires_capture', 'payment.processing', 'payment.captured', 'payment.refunded', 'payment_method.attached', 'payment_method.detached', 'refund.created', 'refund.updated', 'customer.created', 'customer.updated', 'customer.deleted', 'payout.created', 'payout.updated', 'payout.paid', 'payout.failed', 'payout.canceled', 'dispute.created', 'dispute.updated', 'dispute.closed', 'product.created', 'product.updated', 'product.deleted', 'price.created', 'price.updated', 'customer.subscription.created', 'customer.subscription.updated', 'customer.subscription.deleted', 'customer.subscription.trial_will_end', 'customer.subscription.paused', 'customer.subscription.resumed', 'invoice.created', 'invoice.finalized', 'invoice.paid', 'invoice.payment_failed', 'invoice.voided', 'invoice.marked_uncollectible', 'invoice.upcoming', 'test_helpers.test_clock.ready', 'setup_intent.created', 'setup_intent.succeeded', 'setup_intent.setup_failed', 'setup_intent.canceled', 'checkout_session.completed', 'checkout_session.expired', 'payment_link.created', 'payment_link.updated', 'balance.available', 'risk.blocked', '*']]
    description: NotRequired[str | None]


class WebhookEndpointUpdate(TypedDict, closed=True):
    url: NotRequired[str | None]
    enabled_events: NotRequired[list[Literal['payment.created', 'payment.succeeded', 'payment.failed', 'payment.canceled', 'payment.updated', 'payment.requires_action', 'payment.requires_capture', 'payment.processing', 'payment.captured', 'payment.refunded', 'payment_method.attached', 'payment_method.detached', 'refund.created', 'refund.updated', 'customer.created', 'customer.updated', 'customer.deleted', 'payout.created', 'payout.updated', 'payout.paid', 'payout.failed', 'payout.canceled', 'dispute.created', 'dispute.updated', 'dispute.closed', 'product.created', 'product.updated', 'product.deleted', 'price.created', 'price.updated', 'customer.subscription.created', 'customer.subscription.updated', 'customer.subscription.deleted', 'customer.subscription.trial_will_end', 'customer.subscription.paused', 'customer.subscription.resumed', 'invoice.created', 'invoice.finalized', 'invoice.paid', 'invoice.payment_failed', 'invoice.voided', 'invoice.marked_uncollectible', 'invoice.upcoming', 'test_helpers.test_clock.ready', 'setup_intent.created', 'setup_intent.succeeded', 'setup_intent.setup_failed', 'setup_intent.canceled', 'checkout_session.completed', 'checkout_session.expired', 'payment_link.created', 'payment_link.updated', 'balance.available', 'risk.blocked', '*']] | None]
    description: NotRequired[str | None]
    disabled: NotRequired[bool | None]


class WebhookEndpointRollSecret(TypedDict, closed=True):
    expires_in: NotRequired[int | None]


class OpenApiDocument(TypedDict):
    openapi: Literal['3.1.0']


class ConnectorTokenPaymentMethodInput(TypedDict, closed=True):
    type: Literal['connector_token']
    connector_token: str


class Connector(TypedDict, closed=True):
    id: str
    object: Literal['connector']
    type: Literal['simulator', 'stripe']
    name: str | None
    status: Literal['enabled', 'disabled']
    priority: int
    api_base: str | None
    api_key_last4: str | None
    raw_card_data: bool
    livemode: bool
    created: int
    metadata: Metadata


class ConnectorCreate(TypedDict, closed=True):
    """
    `api_key` is required for `stripe`; `simulator` takes none of `api_key`, `api_base`, `webhook_secret`.
    """

    type: Literal['simulator', 'stripe']
    name: NotRequired[str | None]
    api_key: NotRequired[str | None]
    api_base: NotRequired[str | None]
    webhook_secret: NotRequired[str | None]
    priority: NotRequired[int | None]
    raw_card_data: NotRequired[bool | None]
    metadata: NotRequired[MetadataParam]


class ConnectorUpdate(TypedDict, closed=True):
    name: NotRequired[str | None]
    api_key: NotRequired[str | None]
    api_base: NotRequired[str | None]
    webhook_secret: NotRequired[str | None]
    priority: NotRequired[int | None]
    raw_card_data: NotRequired[bool | None]
    metadata: NotRequired[MetadataParam]
    disabled: NotRequired[bool | None]


class DeletedConnector(TypedDict, closed=True):
    id: str
    object: Literal['connector']
    deleted: Literal[True]


class ConnectorList(TypedDict, closed=True):
    object: Literal['list']
    data: list[Connector]
    has_more: bool
    url: Literal['/v2/connectors']


class NextActionRedirectToUrl(TypedDict, closed=True):
    """
    The page the customer authenticates on (Tender's, or the processor's).
    """

    url: str
    return_url: NotRequired[str | None]


class NextActionUseProcessorSdk(TypedDict, closed=True):
    """
    The processor gave no page: the client authenticates with the processor's own SDK.
    """

    processor: Literal['stripe']
    reference: str | None


class BalanceAmount(TypedDict, closed=True):
    amount: int
    currency: Currency


class Processors(TypedDict, closed=True):
    """
    Money captured through connectors and held by their processors, per currency (empty lists when none).
    """

    available: list[BalanceAmount]
    pending: list[BalanceAmount]


class Balance(TypedDict, closed=True):
    """
    What the merchant is owed, per currency that has transactions. `available` and `pending` are what Tender holds (each figure the sum of `net` of Tender's transactions of that status; only this is paid out by Tender); `processors` is what connectors' processors hold for the merchant from payments they captured and booked: they pay it out.
    """

    object: Literal['balance']
    available: list[BalanceAmount]
    pending: list[BalanceAmount]
    processors: Processors
    livemode: bool


class FeeDetail(TypedDict, closed=True):
    amount: int
    currency: Currency
    type: Literal['tender_fee', 'dispute_fee', 'processor_fee']
    description: str


class BalanceTransaction(TypedDict, closed=True):
    id: str
    object: Literal['balance_transaction']
    amount: int
    currency: Currency
    fee: int
    fee_details: list[FeeDetail]
    net: int
    type: Literal['charge', 'refund', 'refund_failure', 'adjustment', 'payout', 'payout_failure']
    status: Literal['pending', 'available']
    available_on: int
    source: str
    connector: NotRequired[str]
    reporting_category: str
    description: str | None
    created: int
    livemode: bool


class BalanceTransactionList(TypedDict, closed=True):
    object: Literal['list']
    data: list[BalanceTransaction]
    has_more: bool
    url: Literal['/v2/balance_transactions']


class Destination(TypedDict, closed=True):
    """
    The merchant's bank account; `null` for a payout a connector's processor made (it goes where the processor's account says).
    """

    last4: str
    country: str
    account_holder_name: str


class Payout(TypedDict, closed=True):
    id: str
    object: Literal['payout']
    amount: int
    currency: Currency
    status: Literal['pending', 'in_transit', 'paid', 'failed', 'canceled']
    arrival_date: int
    destination: Destination | None
    connector: str | None
    connector_reference: str | None
    balance_transaction: str | None
    failure_balance_transaction: str | None
    failure_code: str | None
    failure_message: str | None
    description: str | None
    metadata: Metadata
    created: int
    livemode: bool


class PayoutList(TypedDict, closed=True):
    object: Literal['list']
    data: list[Payout]
    has_more: bool
    url: Literal['/v2/payouts']


class Destination1(TypedDict, closed=True):
    iban: str
    account_holder_name: str


class PayoutCreate(TypedDict, closed=True):
    amount: int
    currency: str
    destination: Destination1
    description: NotRequired[str]
    metadata: NotRequired[MetadataParam]


class PayoutCancel(TypedDict, closed=True):
    pass


class Evidence(TypedDict, closed=True):
    customer_name: str | None
    customer_email_address: str | None
    product_description: str | None
    uncategorized_text: str | None


class EvidenceDetails(TypedDict, closed=True):
    due_by: int
    submission_count: int


class Dispute(TypedDict, closed=True):
    id: str
    object: Literal['dispute']
    amount: int
    currency: Currency
    payment: str
    connector_reference: str | None
    reason: str
    status: Literal['needs_response', 'under_review', 'won', 'lost']
    evidence: Evidence
    evidence_details: EvidenceDetails
    balance_transactions: list[BalanceTransaction]
    metadata: Metadata
    created: int
    livemode: bool


class DisputeList(TypedDict, closed=True):
    object: Literal['list']
    data: list[Dispute]
    has_more: bool
    url: Literal['/v2/disputes']


class Evidence1(TypedDict, closed=True):
    """
    Each field given replaces the one kept; an empty string clears it. Only while `needs_response`.
    """

    customer_name: NotRequired[str]
    customer_email_address: NotRequired[str]
    product_description: NotRequired[str]
    uncategorized_text: NotRequired[str]


class DisputeUpdate(TypedDict, closed=True):
    evidence: NotRequired[Evidence1]
    metadata: NotRequired[MetadataParam]
    submit: NotRequired[bool]


class DisputeClose(TypedDict, closed=True):
    pass


class Recurring(TypedDict, closed=True):
    interval: Literal['day', 'week', 'month', 'year']
    interval_count: int


class Product(TypedDict, closed=True):
    id: str
    object: Literal['product']
    name: str
    description: str | None
    active: bool
    metadata: Metadata
    created: int
    livemode: bool


class Price(TypedDict, closed=True):
    id: str
    object: Literal['price']
    product: str
    currency: str
    unit_amount: int
    type: Literal['one_time', 'recurring']
    recurring: Recurring | None
    active: bool
    nickname: str | None
    lookup_key: str | None
    metadata: Metadata
    created: int
    livemode: bool


class SubscriptionItem(TypedDict, closed=True):
    id: str
    object: Literal['subscription_item']
    price: Price
    quantity: int


class Items(TypedDict, closed=True):
    object: Literal['list']
    data: list[SubscriptionItem]


class Period(TypedDict, closed=True):
    start: int
    end: int


class InvoiceLine(TypedDict, closed=True):
    price: str
    quantity: int
    amount: int
    period: Period
    description: str


class Lines(TypedDict, closed=True):
    object: Literal['list']
    data: list[InvoiceLine]


class Invoice(TypedDict, closed=True):
    id: str
    object: Literal['invoice']
    customer: str
    subscription: str | None
    billing_reason: Literal['subscription_create', 'subscription_cycle', 'upcoming']
    status: Literal['draft', 'open', 'paid', 'uncollectible', 'void']
    number: NotRequired[str | None]
    currency: str
    amount_due: int
    amount_paid: int
    lines: Lines
    period_start: int
    period_end: int
    attempt_count: int
    next_payment_attempt: int | None
    payment: str | None
    payments: list[str]
    first_failed_at: NotRequired[int]
    dunning_step: NotRequired[int]
    hosted_invoice_url: str | None
    created: int
    livemode: bool


class Advancing(TypedDict, closed=True):
    target_frozen_time: int


class StatusDetails(TypedDict, closed=True):
    advancing: NotRequired[Advancing]


class TestClock(TypedDict, closed=True):
    id: str
    object: Literal['test_helpers.test_clock']
    frozen_time: int
    status: Literal['ready', 'advancing']
    status_details: StatusDetails
    name: str | None
    created: int
    livemode: Literal[False]


class ProductList(TypedDict, closed=True):
    object: Literal['list']
    data: list[Product]
    has_more: bool
    url: Literal['/v2/products']


class PriceList(TypedDict, closed=True):
    object: Literal['list']
    data: list[Price]
    has_more: bool
    url: Literal['/v2/prices']


class InvoiceList(TypedDict, closed=True):
    object: Literal['list']
    data: list[Invoice]
    has_more: bool
    url: Literal['/v2/invoices']


class TestClockList(TypedDict, closed=True):
    object: Literal['list']
    data: list[TestClock]
    has_more: bool
    url: Literal['/v2/test_helpers/test_clocks']


class DeletedProduct(TypedDict, closed=True):
    id: str
    object: Literal['product']
    deleted: Literal[True]


class DeletedTestClock(TypedDict, closed=True):
    id: str
    object: Literal['test_helpers.test_clock']
    deleted: Literal[True]


class Empty(TypedDict, closed=True):
    pass


class ProductCreate(TypedDict, closed=True):
    name: str
    description: NotRequired[str]
    active: NotRequired[bool]
    metadata: NotRequired[MetadataParam]


class ProductUpdate(TypedDict, closed=True):
    name: NotRequired[str]
    description: NotRequired[str | None]
    active: NotRequired[bool]
    metadata: NotRequired[MetadataParam]


class Recurring1(TypedDict, closed=True):
    interval: Literal['day', 'week', 'month', 'year']
    interval_count: NotRequired[int]


class PriceCreate(TypedDict, closed=True):
    product: str
    currency: str
    unit_amount: int
    recurring: NotRequired[Recurring1]
    active: NotRequired[bool]
    nickname: NotRequired[str]
    lookup_key: NotRequired[str]
    transfer_lookup_key: NotRequired[bool]
    metadata: NotRequired[MetadataParam]


class PriceUpdate(TypedDict, closed=True):
    active: NotRequired[bool]
    nickname: NotRequired[str | None]
    lookup_key: NotRequired[str | None]
    transfer_lookup_key: NotRequired[bool]
    metadata: NotRequired[MetadataParam]


class Item(TypedDict, closed=True):
    price: str
    quantity: NotRequired[int]


class SubscriptionUpdate(TypedDict, closed=True):
    cancel_at_period_end: NotRequired[bool]
    default_payment_method: NotRequired[str]
    metadata: NotRequired[MetadataParam]


class InvoicePay(TypedDict, closed=True):
    payment_method: NotRequired[str]


class TestClockCreate(TypedDict, closed=True):
    frozen_time: int
    name: NotRequired[str]


class TestClockAdvance(TypedDict, closed=True):
    frozen_time: int


class CustomerCreate(TypedDict, closed=True):
    """
    All optional. On update, null or `""` clears a field.
    """

    email: NotRequired[str | None]
    name: NotRequired[str | None]
    phone: NotRequired[str | None]
    address: NotRequired[AddressParam | None]
    description: NotRequired[str | None]
    metadata: NotRequired[MetadataParam]
    test_clock: NotRequired[str]


class InvoiceSettings1(TypedDict, closed=True):
    default_payment_method: NotRequired[str | None]


class CustomerUpdate(TypedDict, closed=True):
    """
    All optional; null or `""` clears a field.
    """

    email: NotRequired[str | None]
    name: NotRequired[str | None]
    phone: NotRequired[str | None]
    address: NotRequired[AddressParam | None]
    description: NotRequired[str | None]
    metadata: NotRequired[MetadataParam]
    invoice_settings: NotRequired[InvoiceSettings1]


class LastSetupError(TypedDict, closed=True):
    """
    The decline of the last confirmation, until one succeeds.
    """

    code: str
    decline_code: str | None
    message: str
    payment_method: str | None


class SetupIntent(TypedDict, closed=True):
    """
    A card saved for later without being charged. Confirming verifies the card with its issuer and attaches it to the customer.
    """

    id: str
    object: Literal['setup_intent']
    status: Literal['requires_payment_method', 'requires_confirmation', 'succeeded', 'canceled']
    customer: str | None
    payment_method: str | None
    usage: Literal['off_session', 'on_session']
    description: str | None
    metadata: Metadata
    last_setup_error: LastSetupError | None
    cancellation_reason: Literal['abandoned', 'duplicate', 'requested_by_customer'] | None
    canceled_at: int | None
    livemode: bool
    created: int


class SetupIntentList(TypedDict, closed=True):
    object: Literal['list']
    data: list[SetupIntent]
    has_more: bool
    url: Literal['/v2/setup_intents']


class SetupIntentCreate(TypedDict, closed=True):
    customer: NotRequired[str]
    payment_method: NotRequired[str]
    confirm: NotRequired[bool]
    usage: NotRequired[Literal['off_session', 'on_session']]
    description: NotRequired[str]
    metadata: NotRequired[MetadataParam]


class SetupIntentConfirm(TypedDict, closed=True):
    payment_method: NotRequired[str]


class SetupIntentCancel(TypedDict, closed=True):
    cancellation_reason: NotRequired[Literal['abandoned', 'duplicate', 'requested_by_customer'] | None]


class EndBehavior(TypedDict, closed=True):
    missing_payment_method: Literal['create_invoice', 'pause', 'cancel']


class TrialSettings(TypedDict, closed=True):
    end_behavior: EndBehavior


class LineItem(TypedDict, closed=True):
    """
    A line of what a Checkout Session sells: a price and how many.
    """

    id: str
    object: Literal['item']
    description: str
    price: Price
    quantity: int
    currency: str
    amount_subtotal: int
    amount_total: int


class LineItemList(TypedDict, closed=True):
    object: Literal['list']
    data: list[LineItem]
    has_more: Literal[False]
    url: str


class LineItems(TypedDict, closed=True):
    object: Literal['list']
    data: list[LineItem]


class SubscriptionData(TypedDict, closed=True):
    trial_period_days: int | None


class CheckoutSession(TypedDict, closed=True):
    """
    A hosted page where a shop's customer pays (`payment`), subscribes (`subscription`) or saves a card (`setup`), so that the card number reaches Tender and never the shop. `open` → `complete` (once, `checkout_session.completed`) or `expired` (`checkout_session.expired`).
    """

    id: str
    object: Literal['checkout_session']
    mode: Literal['payment', 'subscription', 'setup']
    status: Literal['open', 'complete', 'expired']
    payment_status: Literal['unpaid', 'paid', 'no_payment_required']
    currency: str | None
    amount_subtotal: int | None
    amount_total: int | None
    line_items: LineItems
    url: str | None
    success_url: str
    cancel_url: str | None
    customer: str | None
    customer_email: str | None
    client_reference_id: str | None
    allow_promotion_codes: bool
    subscription_data: SubscriptionData | None
    capture_method: Literal['automatic', 'manual']
    payment_intent: str | None
    subscription: str | None
    setup_intent: str | None
    payment_link: str | None
    declined_attempts: int
    trying_until: NotRequired[int]
    metadata: Metadata
    expires_at: int
    completed_at: int | None
    livemode: bool
    created: int


class CheckoutSessionList(TypedDict, closed=True):
    object: Literal['list']
    data: list[CheckoutSession]
    has_more: bool
    url: Literal['/v2/checkout_sessions']


class ProductData(TypedDict, closed=True):
    name: str


class Recurring2(TypedDict, closed=True):
    interval: Literal['day', 'week', 'month', 'year']
    interval_count: NotRequired[int | None]


class PriceData(TypedDict, closed=True):
    """
    A price made for this session (with its product, from `product_data`).
    """

    currency: str
    unit_amount: int
    product: NotRequired[str | None]
    product_data: NotRequired[ProductData | None]
    recurring: NotRequired[Recurring2 | None]


class LineItem1(TypedDict, closed=True):
    price: NotRequired[str | None]
    price_data: NotRequired[PriceData | None]
    quantity: NotRequired[int | None]


class SubscriptionData1(TypedDict, closed=True):
    trial_period_days: NotRequired[int | None]


class PaymentIntentData(TypedDict, closed=True):
    capture_method: NotRequired[Literal['automatic', 'automatic_async', 'manual']]


class CheckoutSessionCreate(TypedDict, closed=True):
    mode: Literal['payment', 'subscription', 'setup']
    line_items: NotRequired[list[LineItem1] | None]
    success_url: str
    cancel_url: NotRequired[str | None]
    customer: NotRequired[str | None]
    customer_email: NotRequired[str | None]
    client_reference_id: NotRequired[str | None]
    metadata: NotRequired[MetadataParam]
    allow_promotion_codes: NotRequired[bool | None]
    subscription_data: NotRequired[SubscriptionData1 | None]
    payment_intent_data: NotRequired[PaymentIntentData | None]
    expires_at: NotRequired[int | None]


class Redirect(TypedDict, closed=True):
    url: str


class HostedConfirmation(TypedDict, closed=True):
    custom_message: NotRequired[str | None]


class AfterCompletion(TypedDict, closed=True):
    type: Literal['redirect', 'hosted_confirmation']
    redirect: NotRequired[Redirect]
    hosted_confirmation: NotRequired[HostedConfirmation]


class PaymentLink(TypedDict, closed=True):
    """
    A lasting address (`url`) that sells the same lines to anyone who opens it: each visit opens a fresh Checkout Session.
    """

    id: str
    object: Literal['payment_link']
    active: bool
    mode: Literal['payment', 'subscription']
    currency: str
    line_items: LineItems
    after_completion: AfterCompletion
    allow_promotion_codes: bool
    url: str
    metadata: Metadata
    livemode: bool
    created: int


class PaymentLinkList(TypedDict, closed=True):
    object: Literal['list']
    data: list[PaymentLink]
    has_more: bool
    url: Literal['/v2/payment_links']


class LineItem2(TypedDict, closed=True):
    price: str
    quantity: NotRequired[int | None]


class AfterCompletion1(TypedDict, closed=True):
    """
    `redirect` (with `redirect[url]`) sends the customer on to your address after paying; `hosted_confirmation` (the default) shows Tender's confirmation page with `custom_message`.
    """

    type: Literal['redirect', 'hosted_confirmation']
    redirect: NotRequired[Redirect | None]
    hosted_confirmation: NotRequired[HostedConfirmation | None]


class PaymentLinkCreate(TypedDict, closed=True):
    line_items: list[LineItem2]
    after_completion: NotRequired[AfterCompletion1 | None]
    allow_promotion_codes: NotRequired[bool | None]
    metadata: NotRequired[MetadataParam]


class AfterCompletion2(TypedDict, closed=True):
    """
    `redirect` (with `redirect[url]`) sends the customer on to your address after paying; `hosted_confirmation` (the default) shows Tender's confirmation page with `custom_message`.
    """

    type: Literal['redirect', 'hosted_confirmation']
    redirect: NotRequired[Redirect | None]
    hosted_confirmation: NotRequired[HostedConfirmation | None]


class PaymentLinkUpdate(TypedDict, closed=True):
    active: NotRequired[bool | None]
    after_completion: NotRequired[AfterCompletion2 | None]
    metadata: NotRequired[MetadataParam]


class RiskBlock(TypedDict, closed=True):
    """
    A card-testing block: a client address, a card or a Checkout Session reached the account's decline limit, and further tries are refused (429) before any card reaches the bank. Told once, in a `risk.blocked` event; the dashboard lists them.
    """

    id: str
    object: Literal['risk_block']
    reason: Literal['declines_per_address', 'declines_per_card', 'declines_per_session']
    limit: int
    surface: Literal['checkout_page', 'invoice_page', 'api']
    client_address: str | None
    card_fingerprint: str
    reference: str | None
    blocked_until: int | None
    livemode: bool
    created: int


class ErrorResponse(TypedDict, closed=True):
    """
    The error envelope of every non-2xx response.
    """

    error: ErrorDetail


class InvalidRequestError(ErrorResponse):
    error: Error


class AuthenticationError(ErrorResponse):
    error: Error1


class CardError(ErrorResponse):
    error: Error2


class PermissionError(ErrorResponse):
    error: Error3


class NotFoundError(ErrorResponse):
    error: Error4


class ConflictError(ErrorResponse):
    error: Error5


class BodyTooLargeError(ErrorResponse):
    error: Error6


class UnsupportedMediaTypeError(ErrorResponse):
    error: Error7


class RateLimitError(ErrorResponse):
    error: Error8


class ApiError(ErrorResponse):
    error: Error9


class NextAction(TypedDict, closed=True):
    """
    What the customer must do while the payment `requires_action` (3-D Secure): open `redirect_to_url.url` (Tender's page, or the processor's), or, when the processor gave no page, authenticate with the processor's own client SDK (`use_processor_sdk`); the payment then moves by the processor's webhook or Tender's sync.
    """

    type: Literal['redirect_to_url', 'use_processor_sdk']
    redirect_to_url: NotRequired[NextActionRedirectToUrl]
    use_processor_sdk: NotRequired[NextActionUseProcessorSdk]


class Payment(TypedDict, closed=True):
    id: str
    object: Literal['payment']
    amount: int
    amount_captured: int
    amount_refunded: int
    refunded: bool
    currency: Currency
    status: Literal['requires_payment_method', 'requires_confirmation', 'requires_action', 'requires_capture', 'processing', 'succeeded', 'failed', 'canceled']
    capture_method: Literal['automatic', 'manual']
    payment_method: PaymentMethodSnapshot | None
    customer: str | None
    description: str | None
    metadata: Metadata
    receipt_url: str
    failure_code: str | None
    failure_message: str | None
    decline_code: str | None
    next_action: NextAction | None
    return_url: str | None
    canceled_at: int | None
    cancellation_reason: Literal['duplicate', 'fraudulent', 'requested_by_customer', 'abandoned'] | None
    livemode: bool
    created: int
    connector: str | None
    connector_reference: str | None
    balance_transaction: str | None
    disputed: bool
    invoice: str | None


class PaymentList(TypedDict, closed=True):
    object: Literal['list']
    data: list[Payment]
    has_more: bool
    url: Literal['/v2/payments']


class PaymentCreate(TypedDict, closed=True):
    amount: int
    currency: str
    payment_method: str | CardPaymentMethodInput | BankTransferPaymentMethodInput | ConnectorTokenPaymentMethodInput
    customer: NotRequired[str | None]
    description: NotRequired[str | None]
    metadata: NotRequired[MetadataParam]
    capture: NotRequired[bool | None]
    save_payment_method: NotRequired[bool | None]
    return_url: NotRequired[str | None]


class Subscription(TypedDict, closed=True):
    id: str
    object: Literal['subscription']
    customer: str
    status: Literal['incomplete', 'incomplete_expired', 'trialing', 'active', 'past_due', 'canceled', 'unpaid', 'paused']
    items: Items
    currency: str
    billing_cycle_anchor: int
    current_period_start: int
    current_period_end: int
    trial_start: int | None
    trial_end: int | None
    cancel_at_period_end: bool
    canceled_at: int | None
    ended_at: int | None
    latest_invoice: str | None
    default_payment_method: str | None
    pending_setup_intent: str | None
    test_clock: str | None
    metadata: Metadata
    created: int
    livemode: bool
    trial_settings: TrialSettings


class SubscriptionList(TypedDict, closed=True):
    object: Literal['list']
    data: list[Subscription]
    has_more: bool
    url: Literal['/v2/subscriptions']


class SubscriptionCreate(TypedDict, closed=True):
    customer: str
    items: list[Item]
    default_payment_method: NotRequired[str]
    trial_period_days: NotRequired[int]
    cancel_at_period_end: NotRequired[bool]
    metadata: NotRequired[MetadataParam]
    trial_settings: NotRequired[TrialSettings]


class Data(TypedDict, closed=True):
    object: Payment | PaymentMethod | Refund | Customer | Payout | Dispute | Product | Price | Subscription | Invoice | TestClock | SetupIntent | CheckoutSession | PaymentLink | Balance | RiskBlock
    previous_attributes: NotRequired[dict[str, Any]]


class Event(TypedDict, closed=True):
    id: str
    object: Literal['event']
    type: EventType
    api_version: Literal['2.1']
    created: int
    livemode: bool
    data: Data
    request: Request


class EventList(TypedDict, closed=True):
    object: Literal['list']
    data: list[Event]
    has_more: bool
    url: Literal['/v2/events']
