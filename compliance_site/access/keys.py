"""Issuing and checking API keys.

Format: `cdk_<prefix>_<secret>`. The prefix finds the row; the SHA-256 of the whole key is
compared in constant time. A fast hash is right here: keys carry 256 random bits, so there is
nothing for a slow password hash to protect.
"""

import hashlib
import hmac
import secrets

from compliance_site.access.models import ApiKey

_SCHEME = "cdk"
# Compared against when no row has the prefix, so a miss costs the same as a wrong secret.
_DUMMY_HASH = hashlib.sha256(b"no such key").hexdigest()


def _digest(raw_key: str) -> str:
    return hashlib.sha256(raw_key.encode()).hexdigest()


def api_key_create(*, name: str, rate_limit_per_minute: int | None = None) -> tuple[ApiKey, str]:
    """Create a key and return it with its raw value, which is never stored."""
    prefix = secrets.token_hex(6)
    raw_key = f"{_SCHEME}_{prefix}_{secrets.token_urlsafe(32)}"
    key = ApiKey(name=name, prefix=prefix, key_hash=_digest(raw_key))
    if rate_limit_per_minute is not None:
        key.rate_limit_per_minute = rate_limit_per_minute
    key.save()
    return key, raw_key


def api_key_kept(*, name: str, raw_key: str) -> ApiKey:
    """The key with this raw value, created under `name` when no key has it yet: the quick
    start's demo key, generated once into its env file, stays the same across restarts (with
    any webhooks made with it). Raises ValueError for a value that is not a key of our format,
    or whose prefix another key holds."""
    prefix = _prefix(raw_key)
    if prefix is None:
        raise ValueError("not an API key of the form cdk_<12 hex digits>_<secret>")
    key = ApiKey.objects.filter(prefix=prefix).first()
    if key is None:
        key = ApiKey.objects.create(name=name, prefix=prefix, key_hash=_digest(raw_key))
    elif not hmac.compare_digest(key.key_hash, _digest(raw_key)):
        raise ValueError("another key has this prefix")
    return key


def _prefix(raw_key: str) -> str | None:
    parts = raw_key.split("_", 2)
    if len(parts) != 3 or parts[0] != _SCHEME or len(parts[1]) != 12 or not parts[2]:
        return None
    return parts[1]


def api_key_authenticate(raw_key: str) -> ApiKey | None:
    prefix = _prefix(raw_key)
    if prefix is None:
        return None
    key = ApiKey.objects.filter(prefix=prefix, is_active=True).first()
    expected = key.key_hash if key else _DUMMY_HASH
    if hmac.compare_digest(expected, _digest(raw_key)) and key is not None:
        return key
    return None
