"""POST /api/v1/auth/login with provider=email: one-time codes by email."""

import re
from datetime import timedelta

import pytest
from django.core import mail
from django.utils import timezone

from news_site.accounts.models import ApiToken, LoginCode

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]


@pytest.fixture(autouse=True)
def _outbox(settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"


def _request_code(http, email: str = "Anna@Example.se") -> str:
    response = http.post("/api/v1/auth/login", json={"provider": "email", "email": email})
    assert response.status_code == 202
    assert response.json()["data"] == {"status": "code_sent", "expires_in": 600}
    return re.search(r"\b(\d{6})\b", mail.outbox[-1].body)[1]


def test_the_emailed_code_logs_in_once_and_the_token_works(http):
    code = _request_code(http)

    assert mail.outbox[-1].to == ["anna@example.se"]
    login = http.post(
        "/api/v1/auth/login", json={"provider": "email", "email": "anna@example.se", "code": code}
    )
    reused = http.post(
        "/api/v1/auth/login", json={"provider": "email", "email": "anna@example.se", "code": code}
    )

    assert login.status_code == 200
    data = login.json()["data"]
    assert data["token_type"] == "Bearer"
    assert data["token"].startswith("nws_")
    # Only a hash is stored.
    assert not ApiToken.objects.filter(token_hash=data["token"]).exists()
    assert data["token"] not in str(list(ApiToken.objects.values()))
    auth = {"Authorization": f"Bearer {data['token']}"}
    assert http.get("/api/v1/entries/follows", headers=auth).status_code == 200
    assert reused.status_code == 401
    assert reused.json()["error"]["type"] == "invalid_code"


def _login(http, email: str) -> dict:
    code = _request_code(http, email)
    body = {"provider": "email", "email": email, "code": code}
    return http.post("/api/v1/auth/login", json=body).json()["data"]


def test_the_same_address_logs_into_the_same_account(http):
    first = _login(http, "bo@example.se")
    second = _login(http, "BO@example.se")

    assert first["account_id"] == second["account_id"]
    assert first["token"] != second["token"]


def test_an_expired_code_is_refused(http):
    code = _request_code(http)
    LoginCode.objects.update(expires_at=timezone.now() - timedelta(seconds=1))

    response = http.post(
        "/api/v1/auth/login", json={"provider": "email", "email": "anna@example.se", "code": code}
    )

    assert response.status_code == 401
    assert response.json()["error"]["type"] == "invalid_code"


def test_five_wrong_codes_kill_the_code(http):
    code = _request_code(http)
    wrong = f"{(int(code) + 1) % 10**6:06d}"

    for _ in range(5):
        response = http.post(
            "/api/v1/auth/login",
            json={"provider": "email", "email": "anna@example.se", "code": wrong},
        )
        assert response.status_code == 401
    right = http.post(
        "/api/v1/auth/login", json={"provider": "email", "email": "anna@example.se", "code": code}
    )

    assert right.status_code == 401
    assert not LoginCode.objects.exists()


def test_codes_per_address_are_limited(http, settings, one_window):
    settings.NEWS_LOGIN_CODE_RATE_LIMIT = "2/h"
    _request_code(http)
    _request_code(http)

    response = http.post(
        "/api/v1/auth/login", json={"provider": "email", "email": "anna@example.se"}
    )

    assert response.status_code == 429
    assert response.json()["error"]["type"] == "rate_limited"
    assert int(response.headers["Retry-After"]) > 0
    assert len(mail.outbox) == 2


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"provider": "fax"},
        {"provider": "email"},
        {"provider": "email", "email": "not-an-address"},
        {"provider": "email", "email": "a@example.se", "code": "12345"},
        {"provider": "apple"},
    ],
)
def test_bad_login_bodies_are_400(http, body):
    response = http.post("/api/v1/auth/login", json=body)

    assert response.status_code == 400
    assert response.json()["error"]["type"] == "invalid_parameter"


def test_a_body_that_is_not_json_is_400(http):
    response = http.post(
        "/api/v1/auth/login", content=b"{nope", headers={"Content-Type": "application/json"}
    )

    assert response.status_code == 400
    assert response.json()["error"]["type"] == "invalid_request"
