"""The transport: authentication, the ``Tender-Version`` pin, idempotency keys, retries with
backoff, and turning answers into dicts or :mod:`tender.errors`. Resources build on
:meth:`Transport.request`.

Retried: network errors (no HTTP answer), 409 ``idempotency_error`` (the same key is still in
flight), 429 and 5xx, after ``Retry-After`` when the server sends one, else after an exponential
backoff with jitter. Never retried: any other 4xx. Every ``POST`` carries one
``Idempotency-Key`` for all its tries, so a retried payment is never charged twice: the server
replays the first answer.
"""

from __future__ import annotations

import random
import time
import uuid
from dataclasses import dataclass
from typing import Any, Iterator, Mapping

import httpx

from . import errors

API_VERSION = "2.1"
"""The API version this client speaks, sent on every request."""

__version__ = "0.1.0"

Params = Mapping[str, Any]


@dataclass(frozen=True)
class RetryPolicy:
    """When and how often a call is retried."""

    max_retries: int = 3
    """Retries after the first try (0 disables retrying)."""
    initial_backoff: float = 0.5
    """Seconds before the first retry; doubled on each retry, with 50–100 % jitter."""
    max_backoff: float = 8.0
    max_retry_after: float = 60.0
    """The longest ``Retry-After`` waited for; a longer one is raised instead."""

    def backoff(self, attempt: int) -> float:
        base: float = min(self.max_backoff, self.initial_backoff * (2**attempt))
        return base * random.uniform(0.5, 1.0)


def without_none(params: Params) -> dict[str, Any]:
    """A request body without its ``None`` values (an omitted optional parameter)."""
    return {k: v for k, v in params.items() if v is not None}


QueryValue = str | int | float | bool | None


def query_params(params: Params) -> list[tuple[str, QueryValue]]:
    """Query parameters as the API reads them: booleans as ``true``/``false``, nested
    mappings as ``created[gte]=…``."""
    out: list[tuple[str, QueryValue]] = []
    for key, value in params.items():
        if value is None:
            continue
        if isinstance(value, Mapping):
            for sub, v in value.items():
                out.append((f"{key}[{sub}]", _scalar(v)))
        else:
            out.append((key, _scalar(value)))
    return out


def _scalar(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


class Transport:
    """One API key against one server; shared by every resource of a :class:`tender.Tender`."""

    def __init__(
        self,
        api_key: str,
        base_url: str,
        *,
        retry: RetryPolicy,
        timeout: float,
        http_client: httpx.Client | None,
        sleep: Any = time.sleep,
    ) -> None:
        if not api_key:
            raise ValueError("an API key is required (sk_test_… or sk_live_…)")
        self.api_key = api_key
        self.base_url = base_url.rstrip("/")
        self.retry = retry
        self.http = http_client or httpx.Client(timeout=timeout)
        self.sleep = sleep

    def _headers(self) -> dict[str, str]:
        return {
            "Authorization": f"Bearer {self.api_key}",
            "Tender-Version": API_VERSION,
            "User-Agent": f"tender-python/{__version__}",
        }

    def stream(self, path: str, *, last_event_id: str | None = None) -> Iterator[tuple[str, str]]:
        """Server-sent events from ``path`` over one connection, as ``(id, data)`` pairs, until
        the connection ends (not retried: call again with the last id). A refusal raises the
        typed error before anything is yielded."""
        headers = self._headers() | {"Accept": "text/event-stream"}
        if last_event_id is not None:
            headers["Last-Event-ID"] = last_event_id
        url = f"{self.base_url}/v2{path}"
        data: list[str]
        try:
            with self.http.stream("GET", url, headers=headers) as response:
                if not response.is_success:
                    response.read()
                    raise errors.from_response(response)
                event_id, data = "", []
                for line in response.iter_lines():
                    if line == "":
                        if event_id and data:
                            yield event_id, "\n".join(data)
                        event_id, data = "", []
                        continue
                    if line.startswith(":"):
                        continue  # a keep-alive comment
                    field, _, value = line.partition(":")
                    value = value.removeprefix(" ")
                    if field == "id":
                        event_id = value
                    elif field == "data":
                        data.append(value)
        except httpx.TransportError as e:
            raise errors.APIConnectionError(f"the stream from {self.base_url} broke: {e}") from e

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Params | None = None,
        body: Params | None = None,
        idempotency_key: str | None = None,
    ) -> dict[str, Any]:
        """Sends the call, retrying as the policy allows, and returns the JSON object."""
        headers = self._headers()
        if method == "POST":
            headers["Idempotency-Key"] = idempotency_key or f"tender-py-{uuid.uuid4()}"
        url = f"{self.base_url}/v2{path}"
        query = query_params(params or {})
        json_body = without_none(body) if body is not None else None
        if method == "POST" and json_body is None:
            json_body = {}
        attempt = 0
        while True:
            try:
                response = self.http.request(
                    method, url, params=query, json=json_body, headers=headers
                )
            except httpx.TransportError as e:
                if attempt < self.retry.max_retries:
                    self.sleep(self.retry.backoff(attempt))
                    attempt += 1
                    continue
                raise errors.APIConnectionError(
                    f"could not reach Tender at {self.base_url}: {e}"
                ) from e
            if response.is_success:
                value: dict[str, Any] = response.json()
                return value
            error = errors.from_response(response)
            if attempt < self.retry.max_retries and error.retryable:
                wait = _retry_after(response)
                if wait is not None and wait > self.retry.max_retry_after:
                    raise error
                self.sleep(wait if wait is not None else self.retry.backoff(attempt))
                attempt += 1
                continue
            raise error


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None
