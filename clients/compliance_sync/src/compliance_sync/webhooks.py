"""Checking a webhook delivery: `Compliance-Signature: t=<unix seconds>,v1=<hex>` where the hex
is HMAC-SHA256(secret, "<t>.<raw body>"). Verify the raw bytes as received, before parsing;
several `v1=` values may be sent while a secret is being rotated, and any one matching is
enough. A timestamp outside the tolerance window is refused, so a captured delivery cannot be
replayed later."""

import hashlib
import hmac
import json
import time
from typing import Any

HEADER = "Compliance-Signature"
DEFAULT_TOLERANCE_SECONDS = 300


class SignatureError(Exception):
    """The delivery is not signed with the secret, or was signed too long ago."""


def _sign(secret: str, timestamp: int, body: bytes) -> str:
    message = str(timestamp).encode() + b"." + body
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def signature_header(*, secret: str, body: bytes, timestamp: int | None = None) -> str:
    """The header value a sender computes (for tests of a receiver)."""
    stamp = int(time.time()) if timestamp is None else timestamp
    return f"t={stamp},v1={_sign(secret, stamp, body)}"


def verify_signature(
    *,
    body: bytes,
    header: str | None,
    secret: str,
    tolerance_seconds: int = DEFAULT_TOLERANCE_SECONDS,
    now: float | None = None,
) -> dict[str, Any]:
    """The delivery's JSON body once its signature is checked; raises SignatureError."""
    if not header:
        raise SignatureError(f"no {HEADER} header")
    timestamp: int | None = None
    candidates: list[str] = []
    for part in header.split(","):
        name, _, value = part.strip().partition("=")
        if name == "t" and value.isascii() and value.isdigit():
            timestamp = int(value)
        elif name == "v1":
            candidates.append(value)
    if timestamp is None or not candidates:
        raise SignatureError(f"the {HEADER} header has no timestamp or no v1 signature")
    current = time.time() if now is None else now
    if abs(current - timestamp) > tolerance_seconds:
        raise SignatureError("the signature's timestamp is outside the tolerance window")
    expected = _sign(secret, timestamp, body)
    # Every candidate is compared, in constant time each, so timing says nothing about which.
    matches = [hmac.compare_digest(expected, candidate) for candidate in candidates]
    if not any(matches):
        raise SignatureError("no signature matches the secret")
    try:
        return json.loads(body)
    except ValueError as exc:
        raise SignatureError("the signed body is not JSON") from exc
