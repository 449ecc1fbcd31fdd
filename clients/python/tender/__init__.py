"""Tender's Python client: every endpoint of the API, typed objects and errors, retries with
one idempotency key per call, pagination, and webhook verification. See README.md."""

from . import models, webhooks
from ._client import DEFAULT_BASE_URL, Tender
from ._http import API_VERSION, RetryPolicy, __version__
from .errors import (
    APIConnectionError,
    APIError,
    AuthenticationError,
    CardError,
    IdempotencyError,
    InvalidRequestError,
    PermissionDeniedError,
    RateLimitError,
    TenderError,
)
from .pagination import Page
from .webhooks import SignatureVerificationError

__all__ = [
    "API_VERSION",
    "APIConnectionError",
    "APIError",
    "AuthenticationError",
    "CardError",
    "DEFAULT_BASE_URL",
    "IdempotencyError",
    "InvalidRequestError",
    "Page",
    "PermissionDeniedError",
    "RateLimitError",
    "RetryPolicy",
    "SignatureVerificationError",
    "Tender",
    "TenderError",
    "__version__",
    "models",
    "webhooks",
]
