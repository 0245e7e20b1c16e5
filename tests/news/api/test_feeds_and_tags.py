"""Feeds, tags and follows of /api/v1 over real HTTP."""

import pytest

from news_site.accounts.models import Follow
from tests.support.news_factories import FollowFactory

# Each test in a rolled-back transaction: requests run in-process (tests/support/inprocess.py).
pytestmark = pytest.mark.django_db


def test_feeds_list_counts_relevant_entries_and_is_following_is_false_anonymously(
    http, make_feed, make_entry
):
    busy = make_feed(title="Alfa", site_url="https://alfa.example/", language="sv")
    quiet = make_feed(title="Beta")
    make_feed(title="Gamma", is_active=False)
    make_entry(busy)
    make_entry(busy)
    make_entry(busy, platform_relevant=False)

    body = http.get("/api/v1/feeds").json()

    assert body["data"] == [
        {
            "id": busy.pk,
            "title": "Alfa",
            "site_url": "https://alfa.example/",
            "language": "sv",
            "entries_count": 2,
            "is_following": False,
        },
        {
            "id": quiet.pk,
            "title": "Beta",
            "site_url": "",
            "language": "en",
            "entries_count": 0,
            "is_following": False,
        },
    ]
    assert body["pagination"]["has_more"] is False


def test_is_following_is_true_only_for_the_callers_own_follows(http, make_feed, make_account):
    followed, other = make_feed(title="Alfa"), make_feed(title="Beta")
    anna, anna_auth = make_account("anna@example.se")
    _bo, bo_auth = make_account("bo@example.se")
    FollowFactory(account=anna, feed=followed)

    def following(headers):
        data = http.get("/api/v1/feeds", headers=headers).json()["data"]
        return {feed["id"]: feed["is_following"] for feed in data}

    assert following(anna_auth) == {followed.pk: True, other.pk: False}
    assert following(bo_auth) == {followed.pk: False, other.pk: False}
    personal = http.get("/api/v1/feeds", headers=anna_auth)
    assert personal.headers["Cache-Control"] == "private, no-cache"
    detail = http.get(f"/api/v1/feeds/{followed.pk}", headers=anna_auth).json()["data"]
    assert detail["is_following"] is True


def test_feed_detail_and_entries(http, make_feed, make_entry):
    feed, other = make_feed(), make_feed()
    mine = make_entry(feed)
    make_entry(other)

    detail = http.get(f"/api/v1/feeds/{feed.pk}")
    entries = http.get(f"/api/v1/feeds/{feed.pk}/entries")

    assert detail.json()["data"]["entries_count"] == 1
    assert [e["id"] for e in entries.json()["data"]] == [mine.pk]
    assert http.get("/api/v1/feeds/999999").status_code == 404
    assert http.get("/api/v1/feeds/999999/entries").json()["error"]["type"] == "not_found"


def test_follow_and_unfollow_are_idempotent_and_shape_the_follows_list(
    http, make_feed, make_entry, make_account
):
    followed, other = make_feed(), make_feed()
    entry = make_entry(followed)
    make_entry(other)
    account, auth = make_account()

    for _ in range(2):
        response = http.post(f"/api/v1/feeds/{followed.pk}/follow", headers=auth)
        assert response.status_code == 200
        assert response.json()["data"] == {"feed_id": followed.pk, "is_following": True}
    assert Follow.objects.filter(account=account).count() == 1
    follows = http.get("/api/v1/entries/follows", headers=auth).json()
    assert [e["id"] for e in follows["data"]] == [entry.pk]

    for _ in range(2):
        response = http.delete(f"/api/v1/feeds/{followed.pk}/follow", headers=auth)
        assert response.json()["data"] == {"feed_id": followed.pk, "is_following": False}
    assert http.get("/api/v1/entries/follows", headers=auth).json()["data"] == []


def test_follows_runs_a_fixed_number_of_queries(
    http, make_feed, make_entry, make_account, served_queries
):
    account, auth = make_account()
    for _ in range(10):
        feed = make_feed()
        FollowFactory(account=account, feed=feed)
        make_entry(feed)

    # The token's first request: the token with its account's generation, the follows, the
    # page and the tags; after it, the token and the follows are kept and only the generation
    # is read again (tests/news/api/test_query_counts.py).
    with served_queries.at_most(5):
        response = http.get("/api/v1/entries/follows", headers=auth)
    with served_queries.at_most(3):
        again = http.get("/api/v1/entries/follows?per_page=5", headers=auth)

    assert len(response.json()["data"]) == 10
    assert len(again.json()["data"]) == 5


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/api/v1/entries/follows"),
        ("POST", "/api/v1/feeds/1/follow"),
        ("DELETE", "/api/v1/feeds/1/follow"),
    ],
)
def test_bearer_only_endpoints_answer_401_without_a_token(http, method, path):
    response = http.request(method, path)

    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"].startswith("Bearer")
    assert response.json()["error"]["type"] == "not_authenticated"


def test_follow_of_an_unknown_feed_is_404(http, make_account):
    _account, auth = make_account()

    response = http.post("/api/v1/feeds/424242/follow", headers=auth)

    assert response.status_code == 404


def test_tags_list_only_tags_with_relevant_articles_addressed_by_slug(
    http, make_feed, make_entry, make_tag
):
    feed = make_feed()
    used, unused, hidden = make_tag("Apple Watch"), make_tag("Tom"), make_tag("Dold")
    entry = make_entry(feed, tags=[used])
    make_entry(feed, tags=[hidden], platform_relevant=False)

    tags = http.get("/api/v1/tags").json()["data"]
    detail = http.get("/api/v1/tags/apple-watch")
    entries = http.get("/api/v1/tags/apple-watch/entries").json()["data"]

    assert tags == [
        {"id": used.pk, "name": "Apple Watch", "slug": "apple-watch", "entries_count": 1}
    ]
    assert detail.json()["data"]["slug"] == "apple-watch"
    assert [e["id"] for e in entries] == [entry.pk]
    assert http.get(f"/api/v1/tags/{unused.slug}").status_code == 404
    assert http.get("/api/v1/tags/dold/entries").status_code == 404


@pytest.mark.parametrize("method", ["get", "post", "delete"])
def test_an_id_no_key_can_hold_is_a_404_in_the_envelope_for_every_method(http, method):
    for path in ("/api/v1/feeds/0/follow", "/api/v1/feeds/99999999999999999999/follow"):
        response = http.request(method.upper(), path)
        assert response.status_code == 404, (method, path)
        assert response.json()["error"]["type"] == "not_found"
