"""Every answer of the news API validates strictly (openapi-core, undeclared fields refused)
against the OpenAPI document the service serves: over the demo data, walking every read
operation with the ids its lists hold (tests/support/api_walk.py; the hostile feeds' data is
walked the same way by tests/news/test_hostile_feeds.py), and along the flows an app goes
through: login by code, follows, search, logout, account deletion.
"""

import io
import re

import pytest
from django.core import mail
from django.core.management import call_command
from django.test import Client

from tests.support.api_walk import StrictWalk

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]

# Reads that need an account: walked by the flows below.
FLOW_ONLY = {"/api/v1/entries/follows"}


def test_every_read_of_the_demo_data_validates_strictly(settings):
    settings.FETCH_ALLOW_PRIVATE_NETWORKS = False
    call_command("load_demo", stdout=io.StringIO(), stderr=io.StringIO())

    walk = StrictWalk(Client())
    walk.every_read()

    reads = [path for (method, path) in walk.operations() if method == "get"]
    missing = sorted(set(reads) - {path for (_method, path) in walk.validated} - FLOW_ONLY)
    assert not missing, missing
    assert sum(walk.validated.values()) > 100


def _code() -> str:
    return re.search(r"\b(\d{6})\b", mail.outbox[-1].body)[1]


def test_an_apps_flows_validate_strictly(settings, make_feed, make_entry, make_tag):
    """Login by code, follows, the followed entries, search, errors on the way, logout and
    account deletion: each answer as the document says, the errors included."""
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    feed = make_feed(title="MacSajten")
    make_entry(feed, title="Apple släpper iOS 19", tags=[make_tag("iOS")])
    walk = StrictWalk(Client())
    login = "/api/v1/auth/login"

    sent = walk.call("post", login, login, {"provider": "email", "email": "anna@example.se"})
    wrong = walk.call(
        "post", login, login, {"provider": "email", "email": "anna@example.se", "code": "000000"}
    )
    bad = walk.call("post", login, login, {"provider": "fax"})
    token = walk.call(
        "post", login, login, {"provider": "email", "email": "anna@example.se", "code": _code()}
    )

    assert [sent.status_code, wrong.status_code, bad.status_code] == [202, 401, 400]
    assert token.status_code == 200
    bearer = {"Authorization": f"Bearer {token.json()['data']['token']}"}
    follow = "/api/v1/feeds/{feed_id}/follow"
    path = f"/api/v1/feeds/{feed.pk}/follow"
    assert walk.call("get", "/api/v1/entries/follows", "/api/v1/entries/follows").status_code == 401
    assert walk.call("post", follow, path, headers=bearer).json()["data"]["is_following"]
    followed = walk.call(
        "get", "/api/v1/entries/follows", "/api/v1/entries/follows", headers=bearer
    )
    assert [e["feed"]["id"] for e in followed.json()["data"]] == [feed.pk]
    listed = walk.call("get", "/api/v1/feeds", "/api/v1/feeds", headers=bearer)
    assert listed.json()["data"][0]["is_following"] is True
    assert not walk.call("delete", follow, path, headers=bearer).json()["data"]["is_following"]
    search = "/api/v1/entries/search"
    # Semantic when an earlier test of the process loaded the model, else keyword: both answers
    # are validated.
    assert walk.call("get", search, search, q="iOS").json()["meta"]["mode"] in {
        "keyword",
        "semantic",
    }
    assert walk.call("get", search, search, q=" ").status_code == 400
    assert walk.call("get", search, search, q="iOS", limit="0").status_code == 400
    assert (
        walk.call("get", "/api/v1/entries/{entry_id}", "/api/v1/entries/99999").status_code == 404
    )
    assert (
        walk.call("post", "/api/v1/auth/logout", "/api/v1/auth/logout", headers=bearer).status_code
        == 204
    )
    assert walk.call("post", follow, path, headers=bearer).status_code == 401
    again = walk.call("post", login, login, {"provider": "email", "email": "anna@example.se"})
    assert again.status_code == 202
    token = walk.call(
        "post", login, login, {"provider": "email", "email": "anna@example.se", "code": _code()}
    ).json()["data"]["token"]
    account = "/api/v1/auth/account"
    deleted = walk.call("delete", account, account, headers={"Authorization": f"Bearer {token}"})
    assert deleted.status_code == 204
    writes = {op for op in walk.operations() if op[0] != "get"}
    assert writes <= set(walk.validated), writes - set(walk.validated)
