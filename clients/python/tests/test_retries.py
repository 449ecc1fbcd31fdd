"""Retries against a misbehaving server on 127.0.0.1 (real HTTP): which answers are retried,
that every try of one call carries the same idempotency key, and that ``Retry-After`` is
honoured."""

from __future__ import annotations

import http.server
import json
import threading
from typing import Any, Iterator

import pytest

from tender import APIConnectionError, APIError, InvalidRequestError, RetryPolicy, Tender


class Stub:
    """Answers each request with the next scripted ``(status, headers, body)``, recording the
    idempotency keys it got."""

    def __init__(self, script: list[tuple[int, dict[str, str], dict[str, Any]]]) -> None:
        self.script = script
        self.keys: list[str | None] = []
        stub = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
                stub.keys.append(self.headers.get("Idempotency-Key"))
                status, headers, body = stub.script.pop(0)
                raw = json.dumps(body).encode()
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_port}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


def unavailable() -> dict[str, Any]:
    return {"error": {"type": "api_error", "code": "service_unavailable", "message": "failover",
                      "request_id": "req_1"}}


CUSTOMER = {"id": "cus_1", "object": "customer"}


@pytest.fixture()
def sleeps() -> Iterator[list[float]]:
    yield []


def client(url: str, sleeps: list[float], retries: int = 3) -> Tender:
    c = Tender("sk_test_x", base_url=url, retry=RetryPolicy(max_retries=retries))
    c._transport.sleep = sleeps.append  # record the waits instead of sleeping
    return c


def test_503_and_409_are_retried_with_one_key_and_retry_after_honoured(sleeps: list[float]) -> None:
    stub = Stub([
        (503, {"Retry-After": "1"}, unavailable()),
        (409, {}, {"error": {"type": "idempotency_error", "code": "idempotency_key_in_use",
                             "message": "in flight"}}),
        (200, {}, CUSTOMER),
    ])
    customer = client(stub.url, sleeps).customers.create(email="a@example.com")
    assert customer["id"] == "cus_1"
    assert len(stub.keys) == 3
    assert stub.keys[0] is not None and len(set(stub.keys)) == 1
    assert sleeps[0] == 1.0


def test_a_bad_request_is_not_retried(sleeps: list[float]) -> None:
    stub = Stub([(400, {}, {"error": {"type": "invalid_request_error", "code": "parameter_invalid",
                                      "message": "bad", "param": "email"}})])
    with pytest.raises(InvalidRequestError) as e:
        client(stub.url, sleeps).customers.create(email="nope")
    assert e.value.param == "email"
    assert len(stub.keys) == 1 and sleeps == []


def test_retries_run_out_with_the_last_error(sleeps: list[float]) -> None:
    stub = Stub([(503, {}, unavailable()) for _ in range(3)])
    with pytest.raises(APIError) as e:
        client(stub.url, sleeps, retries=2).customers.create(email="a@example.com")
    assert e.value.status == 503 and e.value.code == "service_unavailable"
    assert len(stub.keys) == 3 and len(sleeps) == 2


def test_an_unreachable_server_is_a_connection_error(sleeps: list[float]) -> None:
    stub = Stub([])
    stub.httpd.shutdown()
    stub.httpd.server_close()
    with pytest.raises(APIConnectionError):
        client(stub.url, sleeps, retries=1).customers.create(email="a@example.com")
    assert len(sleeps) == 1
