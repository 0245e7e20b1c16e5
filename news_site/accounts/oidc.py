"""Verify Sign in with Apple and Google ID tokens (OpenID Connect) with PyJWT.

Each provider's JWKS comes through PyJWT's `PyJWKClient`, one per process and JWKS URL: the key
set is kept for NEWS_JWKS_CACHE_SECONDS, and a token signed with a key id we have not seen
refetches it at most once per NEWS_JWKS_REFETCH_COOLDOWN_SECONDS, so key rotation works without
a restart while tokens with made-up key ids cannot make us hammer the provider.

The JWKS URLs are the operator's own settings and are trusted: they are fetched directly, not
through the guard of shared/fetch.py that keeps URLs from feeds, editors and data off private
networks (an internal mirror or a test double on loopback is a legitimate JWKS).
"""

import logging
import threading
from dataclasses import dataclass
from typing import Any

import jwt
from django.conf import settings

from news_site.accounts.models import Identity
from news_site.accounts.services import LoginFailed
from shared.untrusted_text import first_unpublishable

logger = logging.getLogger(__name__)
_ALGORITHMS = ["RS256"]
_JWKS_TIMEOUT_SECONDS = 10

# One client per (JWKS URL, cache lifetime, cooldown) in this process; tests clear it.
JWKS_CLIENTS: dict[tuple[str, int, int], jwt.PyJWKClient] = {}
_clients_lock = threading.Lock()


@dataclass(frozen=True)
class OidcProvider:
    name: str
    issuers: tuple[str, ...]
    audiences: list[str]
    jwks_url: str


def oidc_provider(name: str) -> OidcProvider:
    if name == "apple":
        return OidcProvider(
            name="apple",
            issuers=("https://appleid.apple.com",),
            audiences=settings.NEWS_APPLE_AUDIENCE,
            jwks_url=settings.NEWS_APPLE_JWKS_URL,
        )
    return OidcProvider(
        name="google",
        # Google documents both spellings of its issuer.
        issuers=("https://accounts.google.com", "accounts.google.com"),
        audiences=settings.NEWS_GOOGLE_AUDIENCE,
        jwks_url=settings.NEWS_GOOGLE_JWKS_URL,
    )


def _jwks_client(url: str) -> jwt.PyJWKClient:
    key = (url, settings.NEWS_JWKS_CACHE_SECONDS, settings.NEWS_JWKS_REFETCH_COOLDOWN_SECONDS)
    with _clients_lock:
        client = JWKS_CLIENTS.get(key)
        if client is None:
            client = JWKS_CLIENTS[key] = jwt.PyJWKClient(
                url,
                cache_jwk_set=True,
                lifespan=settings.NEWS_JWKS_CACHE_SECONDS,
                cooldown_duration=settings.NEWS_JWKS_REFETCH_COOLDOWN_SECONDS,
                timeout=_JWKS_TIMEOUT_SECONDS,
                headers={"Accept": "application/json"},
            )
        return client


def _signing_key(provider: OidcProvider, kid: str | None) -> Any:
    try:
        client = _jwks_client(provider.jwks_url)
        # Fetch (or reuse) the key set first, so that an unreachable or unusable JWKS is told
        # apart from a key id that is not in it.
        client.get_signing_keys()
    except (jwt.PyJWKClientError, jwt.PyJWKSetError, ValueError) as exc:
        logger.warning("%s keys unavailable: %s", provider.name, exc)
        raise LoginFailed("provider_unavailable", f"{provider.name} keys are unavailable") from exc
    try:
        return client.get_signing_key(kid or "").key
    except jwt.PyJWKClientConnectionError as exc:
        logger.warning("%s keys unavailable: %s", provider.name, exc)
        raise LoginFailed("provider_unavailable", f"{provider.name} keys are unavailable") from exc
    except (jwt.PyJWKClientError, jwt.PyJWKSetError, ValueError) as exc:
        raise LoginFailed(
            "invalid_id_token", f"the {provider.name} ID token's key is unknown"
        ) from exc


def id_token_verify(*, provider_name: str, id_token: str) -> dict[str, Any]:
    """The verified claims: signature, issuer, audience, expiry and subject are checked."""
    provider = oidc_provider(provider_name)
    if not provider.audiences or not provider.jwks_url:
        raise LoginFailed("provider_not_configured", f"{provider_name} login is not configured")
    try:
        header = jwt.get_unverified_header(id_token)
    except jwt.PyJWTError as exc:
        raise LoginFailed("invalid_id_token", "the ID token is not a JWT") from exc
    if header.get("alg") not in _ALGORITHMS:
        raise LoginFailed("invalid_id_token", "the ID token's algorithm is not accepted")
    key = _signing_key(provider, header.get("kid"))
    try:
        claims = jwt.decode(
            id_token,
            key=key,
            algorithms=_ALGORITHMS,
            audience=provider.audiences,
            issuer=provider.issuers,
            options={"require": ["iss", "aud", "exp", "iat", "sub"]},
            leeway=60,
        )
    except jwt.ExpiredSignatureError as exc:
        raise LoginFailed("invalid_id_token", "the ID token has expired") from exc
    except jwt.PyJWTError as exc:
        raise LoginFailed("invalid_id_token", f"the ID token is not valid: {exc}") from exc
    _subject_check(claims.get("sub"))
    return claims


def _subject_check(subject: object) -> None:
    """The subject names the account for good: it must be text an identity can store as it
    is (cutting or cleaning it could join two people's accounts)."""
    max_length = Identity._meta.get_field("subject").max_length or 0
    if (
        not isinstance(subject, str)
        or not subject.strip()
        or len(subject) > max_length
        or first_unpublishable(subject) is not None
    ):
        raise LoginFailed(
            "invalid_id_token",
            f"the ID token's subject must be non-empty text of at most {max_length} characters",
        )
