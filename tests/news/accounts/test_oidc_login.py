"""POST /api/v1/auth/login with Apple and Google ID tokens, verified against a JWKS that a
local server serves with keys generated here. The JWKS URL is the operator's own setting, so a
JWKS on loopback works without FETCH_ALLOW_PRIVATE_NETWORKS (which stays off here)."""

import json
import time

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from news_site.accounts.models import Account, Identity
from news_site.accounts.oidc import JWKS_CLIENTS

pytestmark = pytest.mark.django_db

ISSUERS = {"apple": "https://appleid.apple.com", "google": "https://accounts.google.com"}
AUDIENCES = {"apple": "se.example.news", "google": "123.apps.googleusercontent.com"}


class Provider:
    def __init__(self, name: str, server, kid: str = "") -> None:
        self.name = name
        self.kid = kid or f"{name}-key-1"
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key()))
        jwk.update({"kid": self.kid, "alg": "RS256", "use": "sig"})
        server.respond(
            f"/{name}/keys",
            body=json.dumps({"keys": [jwk]}).encode(),
            headers={"Content-Type": "application/json"},
        )

    def token(self, *, key=None, kid: str | None = None, **claims) -> str:
        now = int(time.time())
        payload = {
            "iss": ISSUERS[self.name],
            "aud": AUDIENCES[self.name],
            "sub": "user-0001",
            "iat": now,
            "exp": now + 600,
            "email": "anna@example.se",
            "email_verified": True,
            **claims,
        }
        return jwt.encode(
            payload,
            key or self.key,
            algorithm="RS256",
            headers={"kid": kid or self.kid},
        )


@pytest.fixture(params=["apple", "google"])
def provider(request, server, settings) -> Provider:
    name = request.param
    assert settings.FETCH_ALLOW_PRIVATE_NETWORKS is False
    # Each test serves new keys under the same URL; this process must not remember old ones.
    JWKS_CLIENTS.clear()
    setattr(settings, f"NEWS_{name.upper()}_AUDIENCE", [AUDIENCES[name]])
    setattr(settings, f"NEWS_{name.upper()}_JWKS_URL", server.url(f"/{name}/keys"))
    return Provider(name, server)


def _login(http, provider: Provider, id_token: str):
    return http.post("/api/v1/auth/login", json={"provider": provider.name, "id_token": id_token})


def test_a_valid_id_token_logs_in_and_the_same_subject_returns_to_the_same_account(
    http, provider, server
):
    first = _login(http, provider, provider.token())
    second = _login(http, provider, provider.token())

    assert first.status_code == 200
    assert first.json()["data"]["account_id"] == second.json()["data"]["account_id"]
    identity = Identity.objects.get()
    assert (identity.provider, identity.subject) == (provider.name, "user-0001")
    token = first.json()["data"]["token"]
    follows = http.get("/api/v1/entries/follows", headers={"Authorization": f"Bearer {token}"})
    assert follows.status_code == 200
    # The JWKS is cached between logins.
    assert len(server.requests_to(f"/{provider.name}/keys")) == 1


def test_an_expired_id_token_is_refused(http, provider):
    past = int(time.time()) - 3600
    response = _login(http, provider, provider.token(iat=past - 600, exp=past))

    assert response.status_code == 401
    assert response.json()["error"] == {
        "type": "invalid_id_token",
        "message": "the ID token has expired",
    }


def test_a_token_signed_with_another_key_is_refused(http, provider):
    stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)

    response = _login(http, provider, provider.token(key=stranger))

    assert response.status_code == 401
    assert response.json()["error"]["type"] == "invalid_id_token"


def test_unknown_key_ids_refetch_the_keys_at_most_once_per_cooldown(
    http, provider, server, settings
):
    settings.NEWS_JWKS_REFETCH_COOLDOWN_SECONDS = 60
    assert _login(http, provider, provider.token()).status_code == 200

    # Made-up key ids, one after another: the keys were just fetched, so none refetches them.
    refused = [_login(http, provider, provider.token(kid=f"made-up-{n}")) for n in range(5)]

    assert [r.status_code for r in refused] == [401] * 5
    assert {r.json()["error"]["type"] for r in refused} == {"invalid_id_token"}
    assert len(server.requests_to(f"/{provider.name}/keys")) == 1


def test_a_rotated_key_is_fetched_once_the_cooldown_has_passed(http, provider, server, settings):
    settings.NEWS_JWKS_REFETCH_COOLDOWN_SECONDS = 0
    assert _login(http, provider, provider.token()).status_code == 200
    # The provider rotates: the URL now serves a new key under a new key id.
    rotated = Provider(provider.name, server, kid=f"{provider.name}-key-2")

    response = _login(http, provider, rotated.token())

    assert response.status_code == 200, response.text
    assert len(server.requests_to(f"/{provider.name}/keys")) == 2


def test_email_verified_must_be_true_or_the_string_true(http, provider):
    for n, (verified, expected) in enumerate(
        [(True, "a@example.se"), ("true", "a@example.se"), ("false", ""), ("1", ""), (None, "")]
    ):
        claims = {"sub": f"user-{n}", "email": "a@example.se", "email_verified": verified}
        response = _login(http, provider, provider.token(**claims))
        assert response.status_code == 200
        account = Account.objects.get(pk=response.json()["data"]["account_id"])
        assert account.email == expected, verified


def test_an_address_too_long_to_deliver_is_not_kept(http, provider):
    long_address = "a" * 250 + "@example.se"

    response = _login(http, provider, provider.token(email=long_address))

    assert response.status_code == 200
    assert Account.objects.get().email == ""


@pytest.mark.parametrize(
    "claims",
    [{"aud": "someone-else"}, {"iss": "https://evil.example"}, {"sub": None}],
)
def test_wrong_audience_issuer_or_missing_subject_is_refused(http, provider, claims):
    token_claims = {k: v for k, v in claims.items() if v is not None}
    if claims.get("sub", "") is None:
        now = int(time.time())
        payload = {
            "iss": ISSUERS[provider.name],
            "aud": AUDIENCES[provider.name],
            "iat": now,
            "exp": now + 600,
        }
        token = jwt.encode(
            payload, provider.key, algorithm="RS256", headers={"kid": f"{provider.name}-key-1"}
        )
    else:
        token = provider.token(**token_claims)

    response = _login(http, provider, token)

    assert response.status_code == 401
    assert response.json()["error"]["type"] == "invalid_id_token"


@pytest.mark.every_backend
@pytest.mark.parametrize(
    "subject",
    ["", "   ", "a" * 256, "user\x00nul", "user\u202eevil", 12345],
    ids=["empty", "blank", "256-characters", "nul", "bidi-override", "not-text"],
)
def test_a_subject_no_identity_can_hold_is_a_clean_401(http, provider, subject):
    response = _login(http, provider, provider.token(sub=subject))

    assert response.status_code == 401, response.text
    assert response.json()["error"]["type"] == "invalid_id_token"
    assert not Identity.objects.exists() and not Account.objects.exists()


def test_a_subject_of_255_characters_logs_in(http, provider):
    response = _login(http, provider, provider.token(sub="s" * 255))

    assert response.status_code == 200, response.text
    assert Identity.objects.get().subject == "s" * 255


def test_garbage_and_unsigned_tokens_are_refused(http, provider):
    unsigned = jwt.encode({"sub": "x"}, key=None, algorithm="none")

    for token in ("not-a-jwt", unsigned):
        response = _login(http, provider, token)
        assert response.status_code == 401


def test_an_unconfigured_provider_is_400(http, settings):
    settings.NEWS_APPLE_AUDIENCE = []

    response = http.post("/api/v1/auth/login", json={"provider": "apple", "id_token": "x.y.z"})

    assert response.status_code == 400
    assert response.json()["error"]["type"] == "provider_not_configured"


def test_unreachable_keys_are_503(http, provider, settings, server):
    setattr(settings, f"NEWS_{provider.name.upper()}_JWKS_URL", server.url("/missing"))

    response = _login(http, provider, provider.token())

    assert response.status_code == 503
    assert response.json()["error"]["type"] == "provider_unavailable"
