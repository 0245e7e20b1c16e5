"""Conditional GETs on every news surface a client polls (shared/conditional.py): a strong ETag
and a Last-Modified on each answer; the same request sent back with either validator answers
304 with no body, and a change to what the page shows makes it 200 again."""

from collections.abc import Callable

import pytest

from news_site.news.generation import content_changed
from news_site.news.models import Entry
from tests.support.news_factories import EntryFactory, FeedFactory, StoryFactory

# The validators' dates are kept in the shared cache (Redis, or local memory on SQLite).
pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]


def _edit(entry: Entry) -> None:
    entry.summary_original = entry.summary_translated = "En ny sammanfattning."
    entry.save()
    content_changed()


def _arrive(entry: Entry) -> None:
    EntryFactory(feed=entry.feed)
    content_changed()


def _new_source(entry: Entry) -> None:
    FeedFactory()
    content_changed()


SURFACES: list[tuple[str, Callable[[Entry], str], Callable[[Entry], None]]] = [
    ("api list", lambda entry: "/api/v1/entries", _arrive),
    ("api source list", lambda entry: f"/api/v1/feeds/{entry.feed_id}/entries", _arrive),
    ("api detail", lambda entry: f"/api/v1/entries/{entry.pk}", _edit),
    ("api sources", lambda entry: "/api/v1/feeds", _new_source),
    ("legacy list", lambda entry: "/entries.json", _arrive),
    ("legacy detail", lambda entry: f"/entries/{entry.pk}.json", _edit),
    ("rss", lambda entry: "/entries.rss", _arrive),
    ("markdown entry", lambda entry: f"/entries/{entry.pk}.md", _edit),
    ("markdown index", lambda entry: "/index.md", _arrive),
]


@pytest.mark.parametrize(("surface", "path", "change"), SURFACES, ids=[s[0] for s in SURFACES])
def test_a_repeat_with_a_validator_is_304_until_the_page_changes(http, surface, path, change):
    entry = EntryFactory(feed=FeedFactory())
    url = path(entry)
    # An entry's first open counts a view, which its detail shows: the page changed.
    http.get(url)

    first = http.get(url)
    assert first.status_code == 200, first.text
    etag, last_modified = first.headers["ETag"], first.headers["Last-Modified"]
    assert etag.startswith('"'), "a strong ETag"
    assert "Cache-Control" in first.headers

    by_etag = http.get(url, headers={"If-None-Match": etag})
    by_date = http.get(url, headers={"If-Modified-Since": last_modified})
    for repeat in (by_etag, by_date):
        assert repeat.status_code == 304
        assert repeat.content == b""
        assert repeat.headers["ETag"] == etag
        assert repeat.headers["Last-Modified"] == last_modified

    change(entry)

    after_etag = http.get(url, headers={"If-None-Match": etag})
    after_date = http.get(url, headers={"If-Modified-Since": last_modified})
    for changed in (after_etag, after_date):
        assert changed.status_code == 200
        assert changed.headers["ETag"] != etag
        assert changed.content != first.content
    # The new page is dated after the old one, even within the same second.
    assert after_date.headers["Last-Modified"] != last_modified
    assert http.get(url, headers={"If-None-Match": after_etag.headers["ETag"]}).status_code == 304


def test_a_personal_list_is_conditional_for_its_caller(http, make_account):
    entry = EntryFactory(feed=FeedFactory())
    _account, auth = make_account("reader@example.org")

    first = http.get("/api/v1/feeds", headers=auth)
    repeat = http.get("/api/v1/feeds", headers={**auth, "If-None-Match": first.headers["ETag"]})
    http.post(f"/api/v1/feeds/{entry.feed_id}/follow", headers=auth)
    followed = http.get("/api/v1/feeds", headers={**auth, "If-None-Match": first.headers["ETag"]})

    assert first.headers["Cache-Control"] == "private, no-cache"
    assert repeat.status_code == 304
    assert followed.status_code == 200
    assert followed.json()["data"][0]["is_following"] is True


@pytest.mark.parametrize("path", ["/api/v1/entries/follows", "/api/v1/feeds"])
def test_callers_following_the_same_sources_share_one_page_and_its_validators(
    http, make_account, path
):
    feed = FeedFactory()
    EntryFactory(feed=feed)
    callers = [make_account(f"reader{n}@example.org")[1] for n in range(3)]
    for auth in callers[:2]:
        http.post(f"/api/v1/feeds/{feed.pk}/follow", headers=auth)

    same = [http.get(path, headers=auth) for auth in callers[:2]]
    other = http.get(path, headers=callers[2])
    # The validators are the page's, made with it: not a second caller's own.
    assert same[0].content == same[1].content
    assert same[0].headers["ETag"] == same[1].headers["ETag"]
    assert same[0].headers["Last-Modified"] == same[1].headers["Last-Modified"]
    assert other.content != same[0].content
    assert other.headers["ETag"] != same[0].headers["ETag"]

    # A new generation that changes nothing the page shows keeps its date: a client asking
    # by date gets its 304.
    content_changed()
    again = http.get(
        path, headers={**callers[1], "If-Modified-Since": same[0].headers["Last-Modified"]}
    )
    assert again.status_code == 304
    assert again.headers["ETag"] == same[0].headers["ETag"]


def test_a_story_detail_is_conditional(http):
    entry = EntryFactory(feed=FeedFactory())
    story = StoryFactory(entries_count=1)
    entry.story = story
    entry.save()
    url = f"/api/v1/stories/{story.pk}"

    first = http.get(url)
    assert http.get(url, headers={"If-None-Match": first.headers["ETag"]}).status_code == 304
    story.title = "En annan rubrik"
    story.save()
    content_changed()
    assert http.get(url, headers={"If-None-Match": first.headers["ETag"]}).status_code == 200
