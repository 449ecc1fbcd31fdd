"""Webhook verification, both schemes Tender signs with (docs/api.md, "Signatures"):

- ``Tender-Signature: t=…,v1=…`` (Stripe's scheme): hex HMAC-SHA256 of ``"{t}.{raw body}"``
  keyed with the whole ``whsec_…`` secret;
- Standard Webhooks (``webhook-id``, ``webhook-timestamp``, ``webhook-signature: v1,…``):
  base64 HMAC-SHA256 of ``"{id}.{timestamp}.{raw body}"`` keyed with the base64-decoded secret
  after ``whsec_``.

Both compare in constant time, accept any of several signatures (a secret being rolled), and
refuse a timestamp further than ``tolerance`` seconds from now (a replay).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import time
from typing import Any, Mapping, cast

from . import models

DEFAULT_TOLERANCE = 300


class SignatureVerificationError(Exception):
    """The payload is not signed by this secret, or its timestamp is out of tolerance."""


def construct_event(
    payload: bytes | str,
    header: str,
    secret: str,
    *,
    tolerance: int = DEFAULT_TOLERANCE,
    now: int | None = None,
) -> models.Event:
    """Verifies ``Tender-Signature`` and returns the event; raises
    :class:`SignatureVerificationError` otherwise."""
    raw = payload.encode() if isinstance(payload, str) else payload
    timestamp: int | None = None
    signatures: list[str] = []
    for part in header.split(","):
        key, _, value = part.strip().partition("=")
        if key == "t":
            try:
                timestamp = int(value)
            except ValueError:
                raise SignatureVerificationError("the t= timestamp is not a number") from None
        elif key == "v1":
            signatures.append(value)
    if timestamp is None or not signatures:
        raise SignatureVerificationError("no t= timestamp or no v1= signature in the header")
    _check_time(timestamp, tolerance, now)
    expected = hmac.new(secret.encode(), f"{timestamp}.".encode() + raw, hashlib.sha256).hexdigest()
    if not any(hmac.compare_digest(expected, s) for s in signatures):
        raise SignatureVerificationError("no signature matches this secret")
    return _event(raw)


def construct_event_standard(
    payload: bytes | str,
    headers: Mapping[str, str],
    secret: str,
    *,
    tolerance: int = DEFAULT_TOLERANCE,
    now: int | None = None,
) -> models.Event:
    """Verifies the Standard Webhooks headers (looked up case-insensitively) and returns the
    event; raises :class:`SignatureVerificationError` otherwise."""
    raw = payload.encode() if isinstance(payload, str) else payload
    lower = {k.lower(): v for k, v in headers.items()}
    msg_id = lower.get("webhook-id")
    stamp = lower.get("webhook-timestamp")
    header = lower.get("webhook-signature")
    if not msg_id or not stamp or not header:
        raise SignatureVerificationError("webhook-id, webhook-timestamp or webhook-signature missing")
    try:
        timestamp = int(stamp)
    except ValueError:
        raise SignatureVerificationError("webhook-timestamp is not a number") from None
    _check_time(timestamp, tolerance, now)
    try:
        key = base64.b64decode(secret.removeprefix("whsec_"), validate=True)
    except binascii.Error:
        raise SignatureVerificationError("the secret is not a whsec_ base64 secret") from None
    expected = base64.b64encode(
        hmac.new(key, f"{msg_id}.{timestamp}.".encode() + raw, hashlib.sha256).digest()
    ).decode()
    candidates = [s.partition(",")[2] for s in header.split() if s.startswith("v1,")]
    if not any(hmac.compare_digest(expected, s) for s in candidates):
        raise SignatureVerificationError("no signature matches this secret")
    return _event(raw)


def _check_time(timestamp: int, tolerance: int, now: int | None) -> None:
    current = int(time.time()) if now is None else now
    if abs(current - timestamp) > tolerance:
        raise SignatureVerificationError(
            f"timestamp {timestamp} is more than {tolerance} s from now ({current})"
        )


def _event(raw: bytes) -> models.Event:
    try:
        value: Any = json.loads(raw)
    except ValueError:
        raise SignatureVerificationError("the payload is not JSON") from None
    return cast(models.Event, value)
