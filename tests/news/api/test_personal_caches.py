"""What a process keeps for Bearer requests (docs/api-performance.md) never outlives a change:
its copy of a token and of the follows goes with the account's generation, a rendered page
with the content generation, and without the shared cache nothing kept is used."""

import re

import pytest
from django.core.cache import caches

from news_site.accounts import services as accounts
from news_site.accounts.models import ApiToken
from news_site.news.feeds import feed_refresh
from news_site.news.generation import CONTENT_GENERATION_KEY
from news_site.news.models import Entry
from tests.private_services import cache_on_stopped_redis
from tests.support.news_factories import FollowFactory

pytestmark = pytest.mark.django_db

ENTRIES = "/api/v1/entries?per_page=5"


def _titles(response) -> list[str]:
    assert response.status_code == 200, response.text[:300]
    return [item["content"]["original"]["title"] for item in response.json()["data"]]


def test_a_token_revoked_by_another_process_is_refused_at_once(http, make_account):
    account, auth = make_account()
    assert http.get(ENTRIES, headers=auth).status_code == 200
    assert http.get(ENTRIES, headers=auth).status_code == 200  # answered from the copy

    # What a logout on another process does: the row goes, the generation changes. This
    # process still holds its copy.
    accounts.token_revoke(token=ApiToken.objects.get(account=account))
    raw = auth["Authorization"].removeprefix("Bearer ")
    assert caches["process"].get(f"token:{accounts.token_hash(raw)}") is not None

    refused = http.get(ENTRIES, headers=auth)
    assert refused.status_code == 401
    assert refused.json()["error"]["type"] == "invalid_token"


def test_an_account_deleted_elsewhere_is_refused_at_once(http, make_account):
    account, auth = make_account()
    assert http.get(ENTRIES, headers=auth).status_code == 200

    accounts.account_delete(account=account)

    assert http.get(ENTRIES, headers=auth).status_code == 401


def test_follows_changed_elsewhere_show_at_once(http, make_account, make_feed, make_entry):
    account, auth = make_account()
    first, second = make_feed(title="Första"), make_feed(title="Andra")
    make_entry(first, title="Från den första")
    make_entry(second, title="Från den andra")
    accounts.follow_create(account=account, feed=first)
    follows = "/api/v1/entries/follows"
    assert _titles(http.get(follows, headers=auth)) == ["Från den första"]

    accounts.follow_create(account=account, feed=second)
    assert sorted(_titles(http.get(follows, headers=auth))) == [
        "Från den andra",
        "Från den första",
    ]
    feeds = http.get("/api/v1/feeds", headers=auth).json()["data"]
    assert {feed["title"]: feed["is_following"] for feed in feeds} == {
        "Andra": True,
        "Första": True,
    }

    accounts.follow_delete(account=account, feed=first)
    assert _titles(http.get(follows, headers=auth)) == ["Från den andra"]
    feeds = http.get("/api/v1/feeds", headers=auth).json()["data"]
    assert {feed["title"]: feed["is_following"] for feed in feeds} == {
        "Andra": True,
        "Första": False,
    }


def test_is_following_is_each_callers_own_on_a_shared_page(http, make_account, make_feed):
    feed = make_feed(title="9to5Mac")
    anna, anna_auth = make_account("anna@example.se")
    _bo, bo_auth = make_account("bo@example.se")
    FollowFactory(account=anna, feed=feed)

    for_anna = http.get("/api/v1/feeds", headers=anna_auth).json()["data"]
    for_bo = http.get("/api/v1/feeds", headers=bo_auth).json()["data"]
    anonymous = http.get("/api/v1/feeds").json()["data"]

    assert [f["is_following"] for f in for_anna] == [True]
    assert [f["is_following"] for f in for_bo] == [False]
    assert [f["is_following"] for f in anonymous] == [False]


def test_an_editors_change_shows_in_the_next_page(http, editor_client, make_feed, make_entry):
    entry = make_entry(make_feed(), title="Apple släpper iOS 19")
    assert _titles(http.get(ENTRIES)) == ["Apple släpper iOS 19"]
    # A change that no writer announced waits for the page to expire: the page is kept.
    Entry.objects.filter(pk=entry.pk).update(title="Oannonserad titel")
    assert _titles(http.get(ENTRIES)) == ["Apple släpper iOS 19"]

    page = editor_client.get(f"/admin/news/entry/{entry.pk}/change/")
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)[1]
    saved = editor_client.post(
        f"/admin/news/entry/{entry.pk}/change/",
        data={
            "csrfmiddlewaretoken": csrf,
            "title": "Apple släpper iOS 19.1",
            "author": "",
            "image_url": "",
            "language": "sv",
            "summary_translated": entry.summary_translated,
            "summary_original": entry.summary_original,
            "platform_relevant": "on",
            "story": "",
        },
    )

    assert saved.status_code == 302
    assert _titles(http.get(ENTRIES)) == ["Apple släpper iOS 19.1"]


def test_an_entry_removed_in_the_admin_leaves_the_next_page(
    http, editor_client, make_feed, make_entry
):
    feed = make_feed()
    kept, removed = make_entry(feed, title="Stannar"), make_entry(feed, title="Tas bort")
    assert sorted(_titles(http.get(ENTRIES))) == ["Stannar", "Tas bort"]

    page = editor_client.get(f"/admin/news/entry/{removed.pk}/delete/")
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)[1]
    deleted = editor_client.post(
        f"/admin/news/entry/{removed.pk}/delete/", data={"csrfmiddlewaretoken": csrf, "post": "yes"}
    )

    assert deleted.status_code == 302
    assert _titles(http.get(ENTRIES)) == [kept.title]


def test_entries_an_ingest_stores_show_in_the_next_page(
    http, make_account, server, private_fetching, make_feed, rss
):
    _account, auth = make_account()
    items = [{"guid": "a-1", "link": "https://mac.example/1", "title": "Apple visar iPhone 18"}]
    server.respond("/feed.xml", body=rss(items))
    feed = make_feed(url=server.url("/feed.xml"), language="sv")
    feed_refresh(feed=feed)
    assert _titles(http.get(ENTRIES, headers=auth)) == ["Apple visar iPhone 18"]

    items.append({"guid": "a-2", "link": "https://mac.example/2", "title": "Apple visar iPad"})
    server.respond("/feed.xml", body=rss(items))
    feed.refresh_from_db()
    feed_refresh(feed=feed)

    titles = _titles(http.get(ENTRIES, headers=auth))
    assert sorted(titles) == ["Apple visar iPad", "Apple visar iPhone 18"]


def test_without_the_shared_cache_a_revocation_and_new_content_still_count(
    http, settings, make_account, make_feed, make_entry, served_queries
):
    account, auth = make_account()
    entry = make_entry(make_feed(), title="Före avbrottet")
    assert _titles(http.get(ENTRIES, headers=auth)) == ["Före avbrottet"]

    cache_on_stopped_redis(settings)
    for token in ApiToken.objects.filter(account=account):
        accounts.token_revoke(token=token)
    Entry.objects.filter(pk=entry.pk).update(title="Under avbrottet")

    # The copy of the token is not used: the account's generation (in the database) moved on,
    # and the database refuses the token.
    assert http.get(ENTRIES, headers=auth).status_code == 401
    # Nor is the kept page, once this process's reading of the content generation (at most
    # CONTENT_GENERATION_SECONDS old) has expired: the page is read again.
    caches["process"].delete(CONTENT_GENERATION_KEY)
    with served_queries.at_most(2):
        assert _titles(http.get(ENTRIES)) == ["Under avbrottet"]
