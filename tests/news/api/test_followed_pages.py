"""The first pages of /entries/follows merged from each source's kept newest entries
(news_site.api.followed_pages) are the bytes the database's page is, for generated follow sets,
pages and languages over sources whose entries share listing times."""

import random
import re
from datetime import timedelta

import pytest
from django.test import override_settings
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from news_site.api.followed_pages import SOURCE_DEPTH
from tests.support.news_factories import EntryFactory, FeedFactory, FollowFactory, TagFactory

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]

SOURCES = 6
# A statement reading the entries of several sources at once: the database's page.
_SEVERAL_SOURCES = re.compile(r'"feed_id" IN \(%s, ')


@pytest.fixture
def feed_ids() -> list[int]:
    """Sources of 0 to 40 entries, listed at a few shared moments (ties across and within
    sources, broken by id), some of them not relevant, some tagged, one title with a line
    separator that JSON escapes."""
    rng = random.Random(24)
    now = timezone.now().replace(microsecond=0)
    moments = [now - timedelta(minutes=rng.randrange(30)) for _ in range(12)]
    tags = [TagFactory(name=name) for name in ("Öppet", "apple", "Beta")]
    feeds = [FeedFactory() for _ in range(SOURCES)]
    for index, feed in enumerate(feeds):
        for _ in range(rng.choice([0, 3, 17, 40]) if index else 40):
            EntryFactory(
                feed=feed,
                listed_at=rng.choice(moments),
                published_at=rng.choice([None, rng.choice(moments)]),
                platform_relevant=rng.random() > 0.15,
                language=rng.choice(["sv", "en"]),
                tags=rng.sample(tags, rng.randrange(3)),
            )
    EntryFactory(feed=feeds[0], title="Rad\u2028brytning", listed_at=moments[0])
    return [feed.pk for feed in feeds]


_accounts = iter(range(10**6))


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_merged_first_page_is_the_databases_page(
    http, make_account, served_queries, feed_ids, data
):
    followed = data.draw(st.sets(st.sampled_from(feed_ids), min_size=1), label="followed")
    per_page = data.draw(st.integers(1, SOURCE_DEPTH - 1), label="per_page")
    page = data.draw(st.integers(1, (SOURCE_DEPTH - 1) // per_page), label="page")
    lang = data.draw(st.sampled_from(["sv", "en"]), label="lang")
    account, auth = make_account(f"reader{next(_accounts)}@example.se")
    for feed_id in followed:
        FollowFactory(account=account, feed_id=feed_id)
    url = f"/api/v1/entries/follows?page={page}&per_page={per_page}&lang={lang}"

    start = len(served_queries)
    merged = http.get(url, headers=auth)
    merged_queries = served_queries[start:]
    with override_settings(NEWS_RESPONSE_CACHE_SECONDS=0):
        read = http.get(url, headers=auth)

    assert merged.status_code == read.status_code == 200, merged.text[:300]
    assert merged.content == read.content
    assert merged.headers["ETag"] == read.headers["ETag"]
    # It was merged: no statement read several sources' entries at once.
    assert not any(_SEVERAL_SOURCES.search(sql) for sql in merged_queries)


def test_a_page_by_cursor_or_past_the_kept_depth_is_read(http, make_account, feed_ids):
    account, auth = make_account("deep@example.se")
    for feed_id in feed_ids[:2]:
        FollowFactory(account=account, feed_id=feed_id)
    first = http.get("/api/v1/entries/follows?per_page=30", headers=auth).json()
    by_cursor = http.get(
        "/api/v1/entries/follows?per_page=30&cursor=" + first["pagination"]["next_cursor"],
        headers=auth,
    )
    deep = http.get("/api/v1/entries/follows?per_page=30&page=4", headers=auth)
    with override_settings(NEWS_RESPONSE_CACHE_SECONDS=0):
        read = http.get("/api/v1/entries/follows?per_page=30&page=2", headers=auth).json()

    assert by_cursor.json()["data"] == read["data"]
    assert deep.status_code == 200
