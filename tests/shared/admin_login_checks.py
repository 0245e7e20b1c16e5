"""The admin login checks both services share: a browser-like client of Django admin's login
form, and the tests, which each service's test module runs by subclassing AdminLoginChecks.
The client talks to the application in the test's own process (tests/support/inprocess.py): the
requests run through the whole middleware stack, CSRF checks on, inside the test's transaction."""

import re
from collections.abc import Iterator

import httpx
import pytest

from shared.limits.models import Counter
from tests.private_services import cache_on_stopped_redis
from tests.support.inprocess import BASE_URL, DjangoTransport, ServedQueries
from tests.support.shared_factories import UserFactory

PASSWORD = "correct horse battery staple"


class AdminBrowser:
    """Keeps cookies like a browser, reads the CSRF token from the form and sends it back with
    the Referer a browser sends (Django checks it on HTTPS)."""

    def __init__(self, headers: dict[str, str] | None = None) -> None:
        self.client = httpx.Client(
            transport=DjangoTransport(ServedQueries()),
            base_url=BASE_URL,
            timeout=30,
            headers=headers or {},
        )

    def close(self) -> None:
        self.client.close()

    def login(self, username: str, password: str, *, with_csrf: bool = True) -> httpx.Response:
        form = self.client.get("/admin/login/")
        assert form.status_code == 200, form.status_code
        data = {"username": username, "password": password, "next": "/admin/"}
        if with_csrf:
            data["csrfmiddlewaretoken"] = csrf_token(form.text)
        return self.client.post(
            "/admin/login/?next=/admin/",
            data=data,
            headers={"Referer": f"{BASE_URL}/admin/login/"},
        )


def csrf_token(html: str) -> str:
    return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html)[1]


@pytest.mark.django_db
class AdminLoginChecks:
    """Staff only, CSRF on the login form, and login attempts limited per client address and
    username and per client address, also while Redis is down. A subclass names a page of its
    admin that needs a login, and what its admin says when attempts are over the limit (in the
    admin's language)."""

    admin_page: str
    limited_text: str

    @pytest.fixture
    def browser(self) -> Iterator["AdminBrowser"]:
        browser = AdminBrowser()
        yield browser
        browser.close()

    @pytest.fixture
    def redis_down(self, settings) -> str:
        return cache_on_stopped_redis(settings)

    @pytest.fixture
    def users(self) -> None:
        UserFactory(username="editor", password=PASSWORD)
        UserFactory(username="reader", password=PASSWORD, is_staff=False)

    def test_anonymous_requests_are_sent_to_the_login_form(self, browser):
        response = browser.client.get(self.admin_page)

        assert response.status_code == 302
        assert response.headers["Location"].startswith("/admin/login/?next=")

    def test_a_staff_user_logs_in(self, browser, users):
        response = browser.login("editor", PASSWORD)

        assert response.status_code == 302
        assert response.headers["Location"] == "/admin/"
        assert browser.client.get("/admin/").status_code == 200

    def test_a_user_who_is_not_staff_cannot_log_in(self, browser, users):
        response = browser.login("reader", PASSWORD)

        assert response.status_code == 200
        assert 'class="errornote"' in response.text
        assert browser.client.get("/admin/").status_code == 302

    def test_a_login_without_the_csrf_token_is_refused(self, browser, users):
        response = browser.login("editor", PASSWORD, with_csrf=False)

        assert response.status_code == 403
        assert browser.client.get("/admin/").status_code == 302

    def test_login_attempts_are_limited_per_client_address(
        self, browser, users, settings, one_window
    ):
        settings.ADMIN_LOGIN_IP_RATE_LIMIT = "3/15m"
        for n in range(3):
            assert browser.login(f"guess{n}", "wrong password").status_code == 200

        limited = browser.login("editor", PASSWORD)

        assert limited.status_code == 429
        assert 0 < int(limited.headers["Retry-After"]) <= 15 * 60
        assert self.limited_text in limited.text
        assert browser.client.get("/admin/").status_code == 302
        # The form itself is still shown; only attempts count.
        assert browser.client.get("/admin/login/").status_code == 200

    def test_spellings_of_a_username_share_one_count_per_address(self, users, settings, one_window):
        settings.ADMIN_LOGIN_RATE_LIMIT = "3/15m"
        settings.TRUSTED_PROXIES = ["127.0.0.1"]
        # Django's login form reads fullwidth letters as ASCII (NFKC): these are all "editor".
        spellings = ["editor", "Editor", "\uff45\uff44\uff49\uff54\uff4f\uff52"]

        answers = [attempt("203.0.113.1", name, "wrong") for name in spellings]

        assert answers == [200, 200, 200]
        assert attempt("203.0.113.1", "EDITOR", PASSWORD) == 429

    def test_a_stranger_cannot_lock_an_editor_out(self, users, settings, one_window):
        settings.ADMIN_LOGIN_RATE_LIMIT = "3/15m"
        settings.TRUSTED_PROXIES = ["127.0.0.1"]
        stranger = [attempt("203.0.113.7", "editor", "wrong") for _ in range(4)]
        assert stranger == [200, 200, 200, 429]

        # The editor, from their own address, is not held back.
        assert attempt("198.51.100.8", "editor", PASSWORD) == 302

    # While Redis is down attempts are counted in the database, under a row lock (PostgreSQL)
    # or a write transaction (SQLite).
    @pytest.mark.every_backend
    def test_with_redis_down_attempts_are_counted_in_the_database(
        self, browser, users, settings, redis_down, one_window
    ):
        settings.ADMIN_LOGIN_RATE_LIMIT = "3/15m"
        assert [browser.login("editor", "wrong").status_code for _ in range(3)] == [200] * 3

        limited = browser.login("editor", PASSWORD)

        assert limited.status_code == 429
        assert Counter.objects.exists()
        assert "editor" not in str(list(Counter.objects.values()))

    @pytest.mark.every_backend
    def test_with_redis_down_an_editor_still_logs_in(self, browser, users, redis_down):
        response = browser.login("\uff45ditor", PASSWORD)

        assert response.status_code == 302
        assert browser.client.get("/admin/").status_code == 200


def attempt(address: str, username: str, password: str) -> int:
    """One login attempt from a client `address` (forwarded by the trusted proxy 127.0.0.1, the
    test client's own address)."""
    browser = AdminBrowser(headers={"X-Forwarded-For": address})
    try:
        return browser.login(username, password).status_code
    finally:
        browser.close()
