"""POST /api/v1/auth/login is limited per client address, on top of the per-email limits."""

import pytest
from django.core import mail

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _outbox(settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    settings.NEWS_LOGIN_RATE_LIMIT = "3/10m"


def _login(http, email: str, **headers: str):
    return http.post(
        "/api/v1/auth/login", json={"provider": "email", "email": email}, headers=headers
    )


def test_one_address_cannot_spray_codes_over_many_emails(http, settings):
    assert [_login(http, f"user{n}@example.se").status_code for n in range(3)] == [202] * 3

    limited = _login(http, "user4@example.se")

    assert limited.status_code == 429
    assert limited.json() == {
        "error": {
            "type": "rate_limited",
            "message": "too many logins from this address: try again later",
        },
        "meta": {"api_version": "v1"},
    }
    assert 0 < int(limited.headers["Retry-After"]) <= 600
    assert limited.headers["RateLimit-Policy"] == '"login";q=3;w=600'
    assert len(mail.outbox) == 3


def test_failed_logins_count_too(http):
    body = {"provider": "email", "email": "anna@example.se", "code": "000000"}
    assert [http.post("/api/v1/auth/login", json=body).status_code for _ in range(3)] == [401] * 3

    assert http.post("/api/v1/auth/login", json=body).status_code == 429


def test_behind_a_trusted_proxy_each_client_has_its_own_budget(http, settings):
    settings.TRUSTED_PROXIES = ["127.0.0.1"]
    for n in range(3):
        assert (
            _login(http, f"user{n}@example.se", **{"X-Forwarded-For": "203.0.113.5"}).status_code
            == 202
        )

    assert _login(http, "a@example.se", **{"X-Forwarded-For": "203.0.113.5"}).status_code == 429
    assert _login(http, "b@example.se", **{"X-Forwarded-For": "203.0.113.6"}).status_code == 202


def test_a_forwarded_address_from_an_untrusted_peer_is_ignored(http):
    for n in range(3):
        assert (
            _login(http, f"user{n}@example.se", **{"X-Forwarded-For": f"203.0.113.{n}"}).status_code
            == 202
        )

    assert _login(http, "a@example.se", **{"X-Forwarded-For": "203.0.113.99"}).status_code == 429


def test_ipv6_clients_are_counted_per_64_prefix(http, settings):
    """One host holds a whole /64: a new address from it for each call is still one client."""
    settings.TRUSTED_PROXIES = ["127.0.0.1"]
    for n in range(3):
        forwarded = {"X-Forwarded-For": f"2001:db8:5:7:{n}::{n + 1}"}
        assert _login(http, f"user{n}@example.se", **forwarded).status_code == 202

    same_block = {"X-Forwarded-For": "2001:db8:5:7:ffff:ffff:ffff:fffe"}
    other_block = {"X-Forwarded-For": "2001:db8:5:8::1"}
    assert _login(http, "a@example.se", **same_block).status_code == 429
    assert _login(http, "b@example.se", **other_block).status_code == 202
