"""`pagination.next_cursor` on every /api/v1 list: a walk by cursor while items are added
repeats and skips nothing; a cursor is bound to its list, signed, and survives a key rotation."""

from datetime import date, timedelta

import pytest
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.news_factories import (
    EntryFactory,
    EpisodeFactory,
    FeedFactory,
    StoryFactory,
    TagFactory,
)

# Keyset filters compare datetimes, dates and lowered names in SQL: both databases.
pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]


def walk(http, path: str, per_page: int, between=None, **params) -> list:
    """Every item's id from `path`, page by page by next_cursor; `between()` runs between two
    pages."""
    seen = []
    body = http.get(path, params={"per_page": per_page, **params}).json()
    while True:
        seen += [item.get("id", item.get("episode_id")) for item in body["data"]]
        cursor = body["pagination"]["next_cursor"]
        if cursor is None:
            assert body["pagination"]["has_more"] is False
            return seen
        assert body["pagination"]["has_more"] is True
        if between is not None:
            between()
        body = http.get(path, params={"per_page": per_page, "cursor": cursor, **params}).json()
        assert body["pagination"]["page"] is None
        assert body["pagination"]["next_page"] is None


def test_a_cursor_walk_of_entries_while_entries_arrive_repeats_and_skips_nothing(http):
    feed = FeedFactory()
    tag = TagFactory()
    # Ties on listed_at too: the id breaks them.
    moment = timezone.now() - timedelta(hours=3)
    before = [EntryFactory(feed=feed, tags=[tag], listed_at=moment) for _ in range(4)]
    before += [EntryFactory(feed=feed, tags=[tag]) for _ in range(7)]
    expected = {entry.pk for entry in before}

    def arrive() -> None:
        EntryFactory(feed=feed, tags=[tag], listed_at=timezone.now())

    for path in ("/api/v1/entries", f"/api/v1/feeds/{feed.pk}/entries"):
        seen = walk(http, path, 3, arrive)
        assert len(seen) == len(set(seen)), path
        assert expected <= set(seen), path
    seen = walk(http, f"/api/v1/tags/{tag.slug}/entries", 2, arrive)
    assert len(seen) == len(set(seen))
    assert expected <= set(seen)


def test_popular_walks_by_views_then_newest_first(http):
    feed = FeedFactory()
    entries = [EntryFactory(feed=feed, view_count=views) for views in (5, 0, 5, 9, 0, 1)]
    expected = [e.pk for e in sorted(entries, key=lambda e: (e.view_count, e.listed_at, e.pk))]
    expected.reverse()

    assert walk(http, "/api/v1/entries/popular", 2) == expected
    assert walk(http, "/api/v1/entries", 4, sort="popular") == expected


def test_feeds_tags_stories_and_episodes_walk_in_their_order(http):
    # Names that differ only in case sort together (the lists order by the lowered name).
    feeds = [FeedFactory(title=title) for title in ("b", "A", "a", "Ö", "c")]
    tags = [TagFactory(name=name) for name in ("beta", "Alfa", "gamma")]
    for index, feed in enumerate(feeds):
        EntryFactory(feed=feed, tags=[tags[index % 3]])
    now = timezone.now()
    stories = [
        StoryFactory(entries_count=1, updated_at=now - timedelta(minutes=m)) for m in range(5)
    ]
    # Undated episodes come last on every database.
    episodes = [EpisodeFactory(published_on=day) for day in (date(2026, 1, 2), None, None)]
    episodes += [EpisodeFactory(published_on=date(2026, 3, 1)), EpisodeFactory()]

    assert walk(http, "/api/v1/feeds", 2) == [
        item["id"] for item in http.get("/api/v1/feeds", params={"per_page": 100}).json()["data"]
    ]
    assert sorted(walk(http, "/api/v1/feeds", 2)) == sorted(feed.pk for feed in feeds)
    assert walk(http, "/api/v1/tags", 1) == [tags[1].pk, tags[0].pk, tags[2].pk]
    assert walk(http, "/api/v1/stories", 2) == [story.pk for story in stories]
    dated = sorted((e for e in episodes if e.published_on), key=lambda e: (e.published_on, e.pk))
    undated = sorted((e for e in episodes if e.published_on is None), key=lambda e: e.pk)
    expected = [e.episode_id for e in [*reversed(dated), *reversed(undated)]]
    assert walk(http, "/api/v1/podd_episodes", 2) == expected


def test_the_first_page_by_number_has_a_cursor_and_page_numbers_still_work(http):
    feed = FeedFactory()
    for _ in range(3):
        EntryFactory(feed=feed)

    body = http.get("/api/v1/entries", params={"per_page": 2}).json()

    assert body["pagination"]["page"] == 1
    assert body["pagination"]["next_page"] == 2
    assert isinstance(body["pagination"]["next_cursor"], str)
    last = http.get("/api/v1/entries", params={"per_page": 2, "page": 2}).json()
    assert last["pagination"]["next_cursor"] is None
    by_cursor = http.get(
        "/api/v1/entries", params={"per_page": 2, "cursor": body["pagination"]["next_cursor"]}
    ).json()
    assert [e["id"] for e in by_cursor["data"]] == [e["id"] for e in last["data"]]


def _first_cursor(http, path: str, **params) -> str:
    return http.get(path, params={"per_page": 1, **params}).json()["pagination"]["next_cursor"]


def test_a_cursor_of_another_list_or_order_or_with_a_page_is_a_400(http):
    feed = FeedFactory()
    for _ in range(3):
        EntryFactory(feed=feed)
    latest = _first_cursor(http, "/api/v1/entries")
    popular = _first_cursor(http, "/api/v1/entries", sort="popular")

    for path, params in [
        ("/api/v1/entries", {"cursor": popular}),
        ("/api/v1/entries", {"cursor": latest, "sort": "popular"}),
        (f"/api/v1/feeds/{feed.pk}/entries", {"cursor": latest}),
        ("/api/v1/entries", {"cursor": latest, "page": 2}),
        ("/api/v1/entries", {"cursor": latest[:-3] + "abc"}),
    ]:
        response = http.get(path, params=params)
        assert response.status_code == 400, (path, params)
        assert response.json()["error"]["type"] == "invalid_parameter"
        assert "cursor" in response.json()["error"]["message"]


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cursor=st.text(min_size=1, max_size=1200))
def test_any_forged_cursor_is_a_400_in_the_envelope(http, cursor):
    response = http.get("/api/v1/entries", params={"cursor": cursor})

    assert response.status_code == 400
    assert response.json()["error"]["type"] == "invalid_parameter"


def test_a_cursor_signed_under_a_retired_key_still_works(http, settings):
    feed = FeedFactory()
    entries = [EntryFactory(feed=feed) for _ in range(3)]
    old_key = settings.SECRET_KEY
    cursor = _first_cursor(http, "/api/v1/entries")

    settings.SECRET_KEY = "a-new-key-after-rotation-0123456789-abcdefghijklmnopqrstuvwxyz"
    settings.SECRET_KEY_FALLBACKS = [old_key]
    response = http.get("/api/v1/entries", params={"per_page": 1, "cursor": cursor})

    assert response.status_code == 200
    newest_first = sorted(entries, key=lambda e: (e.listed_at, e.pk), reverse=True)
    assert [e["id"] for e in response.json()["data"]] == [newest_first[1].pk]
    settings.SECRET_KEY_FALLBACKS = []
    assert http.get("/api/v1/entries", params={"cursor": cursor}).status_code == 400
