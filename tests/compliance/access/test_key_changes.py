"""A key's limit changed mid-window keeps the window's count, and a new key created in the
admin is shown on its own page, never in the cookie-backed messages."""

import re

import httpx
import pytest

from compliance_site.access.keys import api_key_create
from compliance_site.access.models import ApiKey
from tests.support.inprocess import BASE_URL, DjangoTransport
from tests.support.shared_factories import UserFactory

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]


def test_raising_a_limit_mid_window_keeps_the_calls_already_counted(anonymous, one_window):
    key, raw = api_key_create(name="changing", rate_limit_per_minute=5)
    headers = {"Authorization": f"Bearer {raw}"}
    first = [anonymous.get("/meta", headers=headers).status_code for _ in range(5)]

    ApiKey.objects.filter(pk=key.pk).update(rate_limit_per_minute=7)
    later = [anonymous.get("/meta", headers=headers) for _ in range(3)]

    assert first == [200] * 5
    # 7 calls in the window, not 5 + 7.
    assert [r.status_code for r in later] == [200, 200, 429]
    assert [r.headers["X-RateLimit-Remaining"] for r in later] == ["1", "0", "0"]


def test_lowering_a_limit_mid_window_refuses_at_once(anonymous, one_window):
    key, raw = api_key_create(name="shrinking", rate_limit_per_minute=5)
    headers = {"Authorization": f"Bearer {raw}"}
    for _ in range(4):
        assert anonymous.get("/meta", headers=headers).status_code == 200

    ApiKey.objects.filter(pk=key.pk).update(rate_limit_per_minute=3)

    assert anonymous.get("/meta", headers=headers).status_code == 429


@pytest.fixture
def editor(served_queries) -> httpx.Client:
    UserFactory(username="keeper", password="correct horse", superuser=True)
    transport = DjangoTransport(served_queries)
    client = httpx.Client(transport=transport, base_url=BASE_URL, timeout=30)
    login = client.get("/admin/login/")
    client.post(
        "/admin/login/?next=/admin/",
        data={
            "username": "keeper",
            "password": "correct horse",
            "csrfmiddlewaretoken": _csrf(login),
        },
        headers={"Referer": BASE_URL + "/admin/login/"},
    )
    yield client
    client.close()


def _csrf(response: httpx.Response) -> str:
    return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', response.text)[1]


def test_a_new_key_is_shown_on_its_own_page_and_in_no_cookie(editor, anonymous):
    form = editor.get("/admin/access/apikey/add/")
    created = editor.post(
        "/admin/access/apikey/add/",
        data={
            "name": "Partner",
            "rate_limit_per_minute": "60",
            "is_active": "on",
            "csrfmiddlewaretoken": _csrf(form),
        },
        headers={"Referer": str(form.url)},
    )

    assert created.status_code == 200
    assert "no-store" in created.headers["Cache-Control"]
    raw = re.search(r'id="new-api-key">(cdk_[0-9a-f]{12}_[A-Za-z0-9_\-]+)<', created.text)[1]
    assert anonymous.get("/meta", headers={"Authorization": f"Bearer {raw}"}).status_code == 200
    # Neither this answer's cookies nor any later page carries the secret.
    assert raw not in " ".join(created.headers.get_list("Set-Cookie"))
    assert "messages" not in editor.cookies
    for page in ["/admin/", "/admin/access/apikey/"]:
        assert raw not in editor.get(page).text
    assert raw not in str(ApiKey.objects.values_list().get(name="Partner"))
