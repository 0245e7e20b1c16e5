"""Bearer API keys, per-key and per-IP rate limits, and the headers on every response."""

import time

import pytest
from django.core.management import call_command

from compliance_site.access.keys import api_key_create
from compliance_site.access.models import ApiKey

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]


def test_endpoints_need_a_key(anonymous):
    response = anonymous.get("/meta")

    assert response.status_code == 401
    assert response.json()["error"]["code"] == "missing_api_key"
    assert response.headers["WWW-Authenticate"].startswith("Bearer")
    assert response.headers["X-RateLimit-Limit"] == "30"


@pytest.mark.parametrize(
    "header",
    [
        "Bearer cdk_000000000000_wrong",
        "Bearer",
        "Basic dXNlcjpwYXNz",
        "bearer",
        "Bearer a b",
        "Bearer " + "x" * 5000,
        "Token abc",
        "Bearer \u00e9",
    ],
)
def test_invalid_or_malformed_keys_get_401(anonymous, header):
    response = anonymous.get("/meta", headers={"Authorization": header.encode("utf-8")})

    assert response.status_code == 401
    assert response.json()["error"]["code"] == "invalid_api_key"
    assert response.headers["X-RateLimit-Limit"] == "30"


def test_a_deactivated_key_is_refused(anonymous):
    key, raw = api_key_create(name="old")
    ApiKey.objects.filter(pk=key.pk).update(is_active=False)

    response = anonymous.get("/meta", headers={"Authorization": f"Bearer {raw}"})

    assert response.status_code == 401


def test_every_response_carries_the_rate_limit_headers(api):
    for path in ["/meta", "/states/ZZ", "/changes?limit=0", "/nowhere"]:
        response = api.get(path)
        assert response.headers["X-RateLimit-Limit"] == "1000"
        assert int(response.headers["X-RateLimit-Remaining"]) < 1000
        reset = int(response.headers["X-RateLimit-Reset"])
        assert time.time() < reset <= time.time() + 61
        assert response.headers["RateLimit-Policy"] == '"per-key";q=1000;w=60'
        assert response.headers["RateLimit"].startswith('"per-key";r=')


def test_a_key_is_limited_to_its_own_rate(anonymous, one_window):
    _key, raw = api_key_create(name="small", rate_limit_per_minute=3)
    headers = {"Authorization": f"Bearer {raw}"}

    statuses = [anonymous.get("/meta", headers=headers) for _ in range(4)]

    assert [r.status_code for r in statuses] == [200, 200, 200, 429]
    assert [r.headers["X-RateLimit-Remaining"] for r in statuses] == ["2", "1", "0", "0"]
    limited = statuses[-1]
    assert limited.headers["Content-Type"] == "application/json"
    retry_after = int(limited.headers["Retry-After"])
    assert 1 <= retry_after <= 60
    error = limited.json()["error"]
    assert error["code"] == "rate_limit_exceeded"
    assert isinstance(error["message"], str)
    assert error["retry_after"] == retry_after
    # Another key and anonymous callers are unaffected.
    assert anonymous.get("/review_flags").status_code == 200


def test_the_default_per_key_limit_is_60(db):
    key, _raw = api_key_create(name="default")

    assert key.rate_limit_per_minute == 60


def test_requests_without_a_valid_key_share_30_per_minute_per_ip(anonymous, one_window):
    responses = [anonymous.get("/review_flags") for _ in range(20)]
    responses += [
        anonymous.get("/meta", headers={"Authorization": "Bearer wrong"}) for _ in range(10)
    ]
    over = anonymous.get("/review_flags")

    assert all(r.status_code in (200, 401) for r in responses)
    assert over.status_code == 429
    assert over.json()["error"]["code"] == "rate_limit_exceeded"


def test_a_valid_key_is_not_slowed_by_the_ip_limit(anonymous, api, one_window):
    for _ in range(31):
        anonymous.get("/review_flags")

    assert anonymous.get("/review_flags").status_code == 429
    assert api.get("/meta").status_code == 200


def test_forwarded_headers_are_ignored_unless_the_peer_is_a_trusted_proxy(anonymous, one_window):
    for index in range(31):
        anonymous.get("/review_flags", headers={"X-Forwarded-For": f"203.0.113.{index}"})

    assert anonymous.get("/review_flags").status_code == 429


def test_behind_a_trusted_proxy_each_client_has_its_own_budget(anonymous, settings, one_window):
    settings.TRUSTED_PROXIES = ["127.0.0.1"]
    for _ in range(31):
        anonymous.get("/review_flags", headers={"X-Forwarded-For": "203.0.113.7"})

    blocked = anonymous.get("/review_flags", headers={"X-Forwarded-For": "203.0.113.7"})
    other = anonymous.get("/review_flags", headers={"X-Forwarded-For": "203.0.113.8"})

    assert blocked.status_code == 429
    assert other.status_code == 200


def test_create_api_key_prints_the_key_once_and_stores_only_a_hash(capsys):
    call_command("create_api_key", "--name", "partner", "--rate-limit-per-minute", "120")

    raw = capsys.readouterr().out.strip().splitlines()[-1]
    key = ApiKey.objects.get(name="partner")
    assert raw.startswith("cdk_")
    assert key.rate_limit_per_minute == 120
    assert raw not in {key.key_hash, key.prefix}
    assert len(key.key_hash) == 64
    assert not ApiKey.objects.filter(key_hash__contains=raw[-20:]).exists()
