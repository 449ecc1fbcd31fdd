"""Errors: one class per ``error.type`` of the API (docs/api.md, "Errors"), each carrying the
status, ``code``, ``message``, ``param``, ``request_id`` — and for a declined card its
``decline_code`` and the failed payment's id."""

from __future__ import annotations

from typing import Any

import httpx


class TenderError(Exception):
    """Any error answer of the API (or none, for :class:`APIConnectionError`)."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        type: str | None = None,
        code: str | None = None,
        param: str | None = None,
        decline_code: str | None = None,
        payment: str | None = None,
        request_id: str | None = None,
        body: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.type = type
        self.code = code
        self.param = param
        self.decline_code = decline_code
        self.payment = payment
        """The id of the failed payment a decline created (``pay_…``)."""
        self.request_id = request_id
        self.body = body or {}

    @property
    def retryable(self) -> bool:
        """Whether the same request may succeed if sent again with the same key."""
        return False

    def __str__(self) -> str:
        parts = [self.message]
        if self.code:
            parts.append(f"(code {self.code})")
        if self.request_id:
            parts.append(f"[request {self.request_id}]")
        return " ".join(parts)


class InvalidRequestError(TenderError):
    """400/404/405/408/413/415: a bad parameter, a bad state, an object that does not exist."""


class CardError(TenderError):
    """402: the request was valid but the card was refused; ``decline_code`` says why and
    ``payment`` is the failed payment."""


class AuthenticationError(TenderError):
    """401: no valid API key."""


class PermissionDeniedError(TenderError):
    """403: a publishable key on a secret-key operation."""


class IdempotencyError(TenderError):
    """400: the key was used with another request; 409: the key's first request is running."""

    @property
    def retryable(self) -> bool:
        return self.status == 409


class RateLimitError(TenderError):
    """429: too many requests; retried after ``Retry-After``."""

    @property
    def retryable(self) -> bool:
        return True


class APIError(TenderError):
    """5xx: the server failed (500), its processor did not answer (502), or its database is
    unreachable or failing over (503). Retrying with the same idempotency key is safe."""

    @property
    def retryable(self) -> bool:
        return True


class APIConnectionError(TenderError):
    """No HTTP answer at all (connection refused, reset, timed out) after every retry."""


_BY_TYPE: dict[str, type[TenderError]] = {
    "invalid_request_error": InvalidRequestError,
    "card_error": CardError,
    "authentication_error": AuthenticationError,
    "permission_error": PermissionDeniedError,
    "idempotency_error": IdempotencyError,
    "rate_limit_error": RateLimitError,
    "api_error": APIError,
}


def from_response(response: httpx.Response) -> TenderError:
    """The error an answer carries (its JSON envelope, or a generic one by status)."""
    try:
        body = response.json()
        err = body["error"]
        if not isinstance(err, dict):
            raise TypeError
    except (ValueError, KeyError, TypeError):
        cls: type[TenderError] = APIError if response.status_code >= 500 else InvalidRequestError
        return cls(
            f"HTTP {response.status_code} without an error body",
            status=response.status_code,
        )
    cls = _BY_TYPE.get(str(err.get("type")), APIError if response.status_code >= 500 else TenderError)
    return cls(
        str(err.get("message", "")),
        status=response.status_code,
        type=err.get("type"),
        code=err.get("code"),
        param=err.get("param"),
        decline_code=err.get("decline_code"),
        payment=err.get("payment"),
        request_id=err.get("request_id"),
        body=body,
    )
