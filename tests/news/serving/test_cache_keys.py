"""Each surface news_site/cache_keys.py declares reads, in its view, the query parameters it
declares and no others (as the view reports them, shared/query_reads.py): nginx and the
response cache key a surface's copies on the declared parameters alone, so a view that read one
more would be answered with another request's page."""

import pytest

from news_site.cache_keys import SURFACES, surface_reads
from shared.query_reads import ALL, RESPONSE_HEADER
from tests.support.news_factories import (
    EntryFactory,
    EpisodeFactory,
    FeedFactory,
    GuideFactory,
    StoryFactory,
    TagFactory,
)


@pytest.fixture
def ids(db) -> dict[str, str]:
    """One of each thing a surface's path names, with an entry that shows on every list."""
    feed = FeedFactory()
    tag = TagFactory(slug="ios")
    story = StoryFactory(entries_count=1)
    entry = EntryFactory(feed=feed, tags=[tag], story=story)
    episode = EpisodeFactory()
    guide = GuideFactory(slug="iphone-17")
    return {
        "entry": str(entry.pk),
        "feed": str(feed.pk),
        "tag": str(tag.pk),
        "tag_slug": tag.slug,
        "story": str(story.pk),
        "episode": episode.episode_id,
        "guide": guide.slug,
    }


@pytest.mark.every_backend
@pytest.mark.parametrize("surface", SURFACES, ids=[surface.example for surface in SURFACES])
def test_the_view_reads_what_its_surface_declares(client, ids, surface):
    path = surface.example.format(**ids)

    response = client.get(path, HTTP_X_REPORT_QUERY_READS="1")

    assert response.status_code == 200, (path, response.content[:300])
    assert "public" in response["Cache-Control"]
    assert surface_reads(path) == surface.reads
    reported = response[RESPONSE_HEADER]
    reads = (ALL,) if reported == ALL else tuple(filter(None, reported.split(",")))
    assert reads == surface.reads, path
