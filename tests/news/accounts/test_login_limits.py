"""Email login limits that hold: one spelling per address (NFKC + casefold), a mail relay that
fails answers 503 without using up a code, addresses too long to store are a clear 400, and
with Redis down the code and guess limits are counted in the database instead of waived."""

import re

import pytest
from django.core import mail
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from news_site.accounts.models import Account, LoginCode
from shared.limits.models import Counter
from tests.conftest import free_port
from tests.private_services import cache_on_stopped_redis

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]


@pytest.fixture(autouse=True)
def _outbox(settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"


def _send(http, email: str):
    return http.post("/api/v1/auth/login", json={"provider": "email", "email": email})


def _code() -> str:
    return re.search(r"\b(\d{6})\b", mail.outbox[-1].body)[1]


def _verify(http, email: str, code: str):
    return http.post("/api/v1/auth/login", json={"provider": "email", "email": email, "code": code})


def test_spellings_of_one_address_share_its_code_budget_and_account(http, settings, one_window):
    settings.NEWS_LOGIN_CODE_RATE_LIMIT = "2/h"
    # Fullwidth letters in the domain are valid (IDNA) and name the same mailbox.
    spellings = ["anna@example.se", "ANNA@EXAMPLE.SE", "anna@\uff45\uff58ample.se"]

    answers = [_send(http, email).status_code for email in spellings]

    assert answers == [202, 202, 429]
    assert [message.to for message in mail.outbox] == [["anna@example.se"]] * 2
    login = _verify(http, "Anna@\uff45xample.se", _code())
    assert login.status_code == 200
    assert Account.objects.get().email == "anna@example.se"


@pytest.mark.parametrize("length", [255, 300, 320, 321, 1000])
def test_addresses_longer_than_254_characters_are_a_clear_400(http, length):
    email = "a" * (length - len("@example.se")) + "@example.se"

    for body in (
        {"provider": "email", "email": email},
        {"provider": "email", "email": email, "code": "123456"},
    ):
        response = http.post("/api/v1/auth/login", json=body)
        assert response.status_code == 400
        assert response.json()["error"]["type"] == "invalid_parameter"
        assert response.json()["meta"] == {"api_version": "v1"}
    assert not LoginCode.objects.exists()


@hypothesis_settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    email=st.one_of(
        st.text(max_size=400),
        st.builds(
            lambda local, domain: f"{local}@{domain}",
            st.text(min_size=1, max_size=300),
            st.text(min_size=1, max_size=80),
        ),
    )
)
def test_any_address_is_answered_without_a_server_error(http, settings, email):
    settings.NEWS_LOGIN_RATE_LIMIT = "10000/10m"
    settings.NEWS_LOGIN_CODE_RATE_LIMIT = "10000/h"

    sent = _send(http, email)
    guessed = _verify(http, email, "000000")

    assert sent.status_code in (202, 400), sent.text
    assert guessed.status_code in (400, 401), guessed.text


@pytest.fixture
def redis_down(settings) -> str:
    return cache_on_stopped_redis(settings)


@pytest.fixture
def unreachable_relay(settings):
    """SMTP to a loopback port nobody listens on: the connection is refused."""
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST = "127.0.0.1"
    settings.EMAIL_PORT = free_port()
    settings.EMAIL_TIMEOUT = 2
    return settings


def test_an_unreachable_mail_relay_is_a_503_that_uses_up_no_code(http, unreachable_relay, caplog):
    unreachable_relay.NEWS_LOGIN_CODE_RATE_LIMIT = "2/h"
    # A code sent while the relay worked.
    unreachable_relay.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    assert _send(http, "anna@example.se").status_code == 202
    earlier = _code()
    unreachable_relay.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"

    failed = [_send(http, "anna@example.se") for _ in range(3)]

    for response in failed:
        assert response.status_code == 503
        assert response.json() == {
            "error": {
                "type": "service_unavailable",
                "message": "the login code could not be sent: try again shortly",
            },
            "meta": {"api_version": "v1"},
        }
        assert int(response.headers["Retry-After"]) > 0
    # Nothing was counted: the address still has one of its two codes left.
    assert failed[-1].headers["X-RateLimit-Remaining"] == "1"
    # The log says what failed, without the address.
    failures = [r.getMessage() for r in caplog.records if "mail relay" in r.getMessage()]
    assert failures == ["login code not sent, the mail relay failed: ConnectionRefusedError"] * 3
    # The code mailed before still works.
    assert _verify(http, "anna@example.se", earlier).status_code == 200
    unreachable_relay.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    assert _send(http, "anna@example.se").status_code == 202
    assert _send(http, "anna@example.se").status_code == 429


def test_with_redis_down_codes_per_address_are_counted_in_the_database(http, settings, redis_down):
    settings.NEWS_LOGIN_CODE_RATE_LIMIT = "2/h"

    answers = [_send(http, email).status_code for email in ["bo@example.se", "BO@example.se"] * 2]

    assert answers == [202, 202, 429, 429]
    assert len(mail.outbox) == 2
    limited = _send(http, "bo@example.se")
    assert limited.json()["error"]["type"] == "rate_limited"
    assert 0 < int(limited.headers["Retry-After"]) <= 3600
    # The counters hold hashes, never the address.
    keys = list(Counter.objects.values_list("key", flat=True))
    assert keys and all(re.fullmatch(r"[0-9a-f]{64}", key) for key in keys)
    assert "bo@example.se" not in str(list(Counter.objects.values()))


def test_with_redis_down_code_guesses_per_client_are_counted_in_the_database(
    http, settings, redis_down
):
    settings.NEWS_LOGIN_RATE_LIMIT = "3/10m"
    assert _send(http, "cy@example.se").status_code == 202
    code = _code()
    wrong = f"{(int(code) + 1) % 10**6:06d}"

    guesses = [_verify(http, "cy@example.se", wrong).status_code for _ in range(2)]
    right = _verify(http, "cy@example.se", code)

    assert guesses == [401, 401]
    assert right.status_code == 429
    assert right.json()["error"]["message"] == "too many logins from this address: try again later"
    # Another client is not held back by this one's count.
    settings.TRUSTED_PROXIES = ["127.0.0.1"]
    other = http.post(
        "/api/v1/auth/login",
        json={"provider": "email", "email": "cy@example.se", "code": code},
        headers={"X-Forwarded-For": "203.0.113.9"},
    )
    assert other.status_code == 200


def test_with_redis_up_nothing_is_counted_in_the_database(http, settings):
    settings.NEWS_LOGIN_CODE_RATE_LIMIT = "1/h"

    assert [_send(http, "di@example.se").status_code for _ in range(2)] == [202, 429]
    assert not Counter.objects.exists()
