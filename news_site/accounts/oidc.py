"""Verify Sign in with Apple and Google ID tokens (OpenID Connect) with PyJWT.

The JWKS of each provider is fetched through the guarded fetcher and kept in the shared cache
for an hour; a token signed with a key we have not seen triggers one refetch, so key rotation
works without a restart.
"""

import json
import logging
from dataclasses import dataclass
from typing import Any

import jwt
from django.conf import settings
from django.core.cache import cache
from redis.exceptions import RedisError

from news_site.accounts.services import LoginFailed
from news_site.news.services import http_fetch
from shared.fetch import FetchError

logger = logging.getLogger(__name__)
_JWKS_CACHE_SECONDS = 3600
_ALGORITHMS = ["RS256"]


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


def _jwks(provider: OidcProvider, *, refresh: bool) -> dict[str, Any]:
    key = f"oidc-jwks:{provider.jwks_url}"
    if not refresh:
        cached = _cache_get(key)
        if cached is not None:
            return cached
    try:
        result = http_fetch(
            provider.jwks_url, headers={"Accept": "application/json"}, max_bytes=256 * 1024
        )
        if result.status_code != 200:
            raise LoginFailed("provider_unavailable", f"{provider.name} keys are unavailable")
        jwks = json.loads(result.body)
    except (FetchError, ValueError) as exc:
        raise LoginFailed("provider_unavailable", f"{provider.name} keys are unavailable") from exc
    try:
        cache.set(key, jwks, _JWKS_CACHE_SECONDS)
    except RedisError as exc:
        logger.warning("JWKS not cached, the shared cache is unreachable: %s", exc)
    return jwks


def _cache_get(key: str) -> dict[str, Any] | None:
    # Without the shared cache each login fetches the keys again; it still logs in.
    try:
        return cache.get(key)
    except RedisError as exc:
        logger.warning("JWKS cache unreachable, fetching the keys: %s", exc)
        return None


def _signing_key(provider: OidcProvider, kid: str | None) -> Any:
    for refresh in (False, True):
        try:
            keys = jwt.PyJWKSet.from_dict(_jwks(provider, refresh=refresh))
        except jwt.PyJWTError as exc:
            raise LoginFailed("provider_unavailable", f"{provider.name} keys are unusable") from exc
        for key in keys.keys:
            if key.key_id == kid:
                return key.key
    raise LoginFailed("invalid_id_token", f"the {provider.name} ID token's key is unknown")


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
    return claims
