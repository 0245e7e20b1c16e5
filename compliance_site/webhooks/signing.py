"""The `Compliance-Signature` header: `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`.

Stripe's scheme: the timestamp is signed with the body, so a receiver that checks it against
its clock refuses a captured delivery replayed later (docs/compliance-integrators.md shows the
receiver's side).
"""

import hashlib
import hmac
import secrets

HEADER = "Compliance-Signature"
SECRET_PREFIX = "whsec_"  # noqa: S105 - a prefix, not a secret


def secret_generate() -> str:
    return SECRET_PREFIX + secrets.token_urlsafe(32)


def signature_header(*, secret: str, timestamp: int, body: bytes) -> str:
    signed = f"{timestamp}.".encode() + body
    digest = hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={digest}"
