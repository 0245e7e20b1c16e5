"""Django admin for API keys, review flags and read-only versions, driven over HTTP in-process
(tests/support/inprocess.py)."""

import re

import httpx
import pytest

from compliance_site.access.keys import api_key_create
from compliance_site.access.models import ApiKey
from compliance_site.monitoring.models import ReviewFlag
from tests.support.inprocess import BASE_URL, DjangoTransport
from tests.support.shared_factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def editor(db, served_queries):
    UserFactory(username="editor", password="correct horse", superuser=True)
    transport = DjangoTransport(served_queries)
    client = httpx.Client(transport=transport, base_url=BASE_URL, timeout=30, follow_redirects=True)
    login = client.get("/admin/login/")
    client.post(
        "/admin/login/?next=/admin/",
        data={
            "username": "editor",
            "password": "correct horse",
            "csrfmiddlewaretoken": _csrf(login.text),
            "next": "/admin/",
        },
        headers={"Referer": BASE_URL + "/admin/login/"},
    )
    yield client
    client.close()


def _csrf(html: str) -> str:
    return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html)[1]


def _post_form(client, path, data):
    form = client.get(path)
    return client.post(
        path,
        data={**data, "csrfmiddlewaretoken": _csrf(form.text)},
        headers={"Referer": str(form.url)},
    )


def test_admin_needs_a_staff_login(http):
    response = http.get("/admin/", follow_redirects=False)

    assert response.status_code == 302
    assert "/admin/login/" in response.headers["Location"]


def test_adding_a_key_shows_the_raw_key_once_and_stores_a_hash(editor, anonymous):
    response = _post_form(
        editor,
        "/admin/access/apikey/add/",
        {"name": "Partner", "rate_limit_per_minute": "5", "is_active": "on"},
    )

    raw = re.search(r"(cdk_[0-9a-f]{12}_[A-Za-z0-9_\-]+)", response.text)[1]
    key = ApiKey.objects.get(name="Partner")
    assert key.rate_limit_per_minute == 5
    assert raw not in key.key_hash
    api = anonymous.get("/meta", headers={"Authorization": f"Bearer {raw}"})
    assert api.status_code == 200
    assert api.headers["X-RateLimit-Limit"] == "5"
    assert raw not in editor.get(f"/admin/access/apikey/{key.pk}/change/").text


def test_an_editor_can_change_a_keys_rate_limit(editor, anonymous):
    key, raw = api_key_create(name="Adjustable")
    _post_form(
        editor,
        f"/admin/access/apikey/{key.pk}/change/",
        {"name": "Adjustable", "rate_limit_per_minute": "250", "is_active": "on"},
    )

    api = anonymous.get("/meta", headers={"Authorization": f"Bearer {raw}"})
    assert api.headers["X-RateLimit-Limit"] == "250"


def test_an_editor_flags_and_clears_a_state(editor, anonymous, data_repo, run_reindex):
    data_repo.seed("TX")
    run_reindex()
    _post_form(
        editor,
        "/admin/monitoring/reviewflag/add/",
        {"state_abbreviation": "tx", "reason": "Legislature passed HB 1."},
    )
    report = anonymous.get("/review_flags").json()
    assert report["data"]["flagged"][0]["flagged_reason"] == "Legislature passed HB 1."

    flag = ReviewFlag.objects.get()
    assert flag.created_by == "editor"
    changelist = editor.get("/admin/monitoring/reviewflag/")
    editor.post(
        "/admin/monitoring/reviewflag/",
        data={
            "action": "clear_flags",
            "_selected_action": [str(flag.pk)],
            "csrfmiddlewaretoken": _csrf(changelist.text),
        },
        headers={"Referer": str(changelist.url)},
    )

    flag.refresh_from_db()
    assert flag.cleared_at is not None
    report = anonymous.get("/review_flags").json()
    assert report["meta"]["count_flagged"] == 0


def test_versions_are_shown_but_cannot_be_changed(editor, data_repo, run_reindex):
    data_repo.seed("TX")
    run_reindex()

    listing = editor.get("/admin/records/resourceversion/")
    add = editor.get("/admin/records/resourceversion/add/")

    assert listing.status_code == 200
    assert "TX" in listing.text
    assert add.status_code == 403
