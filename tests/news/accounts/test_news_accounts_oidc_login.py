"""POST /api/v1/auth/login with Apple and Google ID tokens, verified against a JWKS that a
local server serves with keys generated here."""

import json
import time

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from news_site.accounts.models import Identity

pytestmark = pytest.mark.django_db(transaction=True)

ISSUERS = {"apple": "https://appleid.apple.com", "google": "https://accounts.google.com"}
AUDIENCES = {"apple": "se.example.news", "google": "123.apps.googleusercontent.com"}


class Provider:
    def __init__(self, name: str, server) -> None:
        self.name = name
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key()))
        jwk.update({"kid": f"{name}-key-1", "alg": "RS256", "use": "sig"})
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
            headers={"kid": kid or f"{self.name}-key-1"},
        )


@pytest.fixture(params=["apple", "google"])
def provider(request, server, settings, private_fetching) -> Provider:
    name = request.param
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


def test_an_unknown_key_id_refetches_the_keys_once_and_is_refused(http, provider, server):
    response = _login(http, provider, provider.token(kid="rotated-away"))

    assert response.status_code == 401
    assert len(server.requests_to(f"/{provider.name}/keys")) == 2


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
