"""The /api/v1 lists read by their own statements (news_site.news.entry_rows) hold what the
ORM's lists (news_site.news.selectors) hold: the same entries in the same order, page by page
and after every position a cursor can hold, on generated entries with ties in every key (the
same listing time, the same view count), entries without a publication time and irrelevant
ones; and a cursor is the same from either."""

from datetime import UTC, datetime, timedelta

import pytest
from django.db.models import QuerySet
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from news_site.api import cursors
from news_site.news.entry_rows import EntryListing, entry_tag_refs
from news_site.news.models import Entry, Feed, Tag
from news_site.news.selectors import entry_list, entry_popular
from tests.support.news_factories import EntryFactory, FeedFactory, TagFactory

# Row values compare dates as each database stores them: both databases.
pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]

_START = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
_entries = st.lists(
    st.fixed_dictionaries(
        {
            "feed": st.integers(0, 2),
            "tags": st.sets(st.integers(0, 2), max_size=3),
            # A few moments only, and microseconds: ties on listed_at are common.
            "listed": st.sampled_from([0, 0, 1, 2, 3_600_000_001]),
            "published": st.none() | st.integers(-(10**9), 10**9),
            "views": st.sampled_from([0, 0, 1, 7]),
            "relevant": st.booleans(),
        }
    ),
    max_size=14,
)


def _ids(rows) -> list[int]:
    return [row["id"] if isinstance(row, dict) else row.pk for row in rows]


def _listings(feeds: list[Feed], tag: Tag) -> list[tuple[EntryListing, QuerySet[Entry]]]:
    """Each shape of list the API reads, beside the ORM's list of the same entries."""
    one, two = feeds[0].pk, sorted([feeds[0].pk, feeds[2].pk])
    return [
        (EntryListing(), entry_list()),
        (EntryListing(order="popular"), entry_popular()),
        (EntryListing(feed_ids=(one,)), entry_list(feed=feeds[0])),
        (EntryListing(feed_ids=tuple(two)), entry_list().filter(feed_id__in=two)),
        (EntryListing(tag_id=tag.pk), entry_list(tag=tag)),
        (EntryListing(feed_ids=()), Entry.objects.none()),
    ]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(specs=_entries, per_page=st.integers(1, 5))
def test_every_page_and_every_position_holds_what_the_orm_lists_hold(specs, per_page):
    Entry.objects.all().delete()
    Feed.objects.all().delete()
    Tag.objects.all().delete()
    feeds = [FeedFactory() for _ in range(3)]
    tags = [TagFactory() for _ in range(3)]
    for spec in specs:
        listed = _START + timedelta(microseconds=spec["listed"])
        published = spec["published"]
        EntryFactory(
            feed=feeds[spec["feed"]],
            tags=[tags[index] for index in sorted(spec["tags"])],
            listed_at=listed,
            published_at=None if published is None else _START + timedelta(seconds=published),
            view_count=spec["views"],
            platform_relevant=spec["relevant"],
        )

    for listing, queryset in _listings(feeds, tags[1]):
        expected = _ids(queryset)
        assert _ids(listing.rows(after=None, offset=0, limit=100)) == expected, listing
        for start in range(0, len(expected) + 1, per_page):
            page = listing.rows(after=None, offset=start, limit=per_page)
            assert _ids(page) == expected[start : start + per_page], listing
        keys = cursors.named_order_keys(listing.order_by)
        rows = listing.rows(after=None, offset=0, limit=100)
        for index, row in enumerate(rows):
            after = listing.rows(after=cursors.row_values(row, keys), offset=0, limit=100)
            assert _ids(after) == expected[index + 1 :], (listing, index)


def test_a_row_holds_what_an_entry_shows(make_feed, make_entry, make_tag):
    feed = make_feed(title="Källa ä")
    tags = [make_tag("beta"), make_tag("Alfa")]
    listed = datetime(2026, 11, 2, 8, 30, 0, 5, tzinfo=UTC)
    entry = make_entry(feed, tags=tags, listed_at=listed, published_at=None, view_count=3)

    (row,) = EntryListing().rows(after=None, offset=0, limit=10)

    assert row["id"] == entry.pk
    assert row["feed_title"] == "Källa ä"
    # Without a publication time, the listing time stands in, aware on both databases.
    assert row["published"] == listed
    assert row["listed_at"] == listed
    assert row["view_count"] == 3
    assert row["platform_relevant"] is True
    assert entry_tag_refs(entry_ids=[entry.pk]) == {
        entry.pk: [{"id": tags[1].pk, "name": "Alfa"}, {"id": tags[0].pk, "name": "beta"}]
    }


@pytest.mark.parametrize("order", ["latest", "popular"])
def test_a_cursor_is_the_same_from_a_listing_and_from_the_orm(order):
    queryset = entry_popular() if order == "popular" else entry_list()
    from_orm = cursors.order_keys(queryset)
    named = cursors.named_order_keys(EntryListing(order=order).order_by)

    assert cursors.list_identity("/api/v1/entries", named) == cursors.list_identity(
        "/api/v1/entries", from_orm
    )
