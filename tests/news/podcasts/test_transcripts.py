"""The transcript step: each transcript is fetched once, a failing episode never stops the
others and is tried again next run; and the feeds step needs the podcasts app's store."""

from datetime import date

import pytest

from news_site.news.feeds import feed_refresh
from news_site.news.models import FeedKind
from news_site.podcasts.models import EpisodeTranscript, PodcastEpisode
from news_site.podcasts.services import episode_transcripts_fetch
from tests.support.news_factories import EpisodeFactory

pytestmark = pytest.mark.django_db


def _episode(episode_id: str, transcript_url: str) -> PodcastEpisode:
    return EpisodeFactory(
        episode_id=episode_id,
        published_on=date(2026, 3, 1),
        transcript_url=transcript_url,
    )


def test_failing_transcripts_are_counted_and_retried_without_stopping_the_rest(
    server, private_fetching
):
    server.respond("/good.vtt", body=b"WEBVTT\n\nHej!", headers={"Content-Type": "text/vtt"})
    server.respond("/broken.vtt", status=500)
    _episode("good", server.url("/good.vtt"))
    _episode("broken", server.url("/broken.vtt"))
    _episode("unreachable", "http://127.0.0.1:9/nothing.vtt")
    _episode("none", "")

    first = episode_transcripts_fetch()
    server.respond("/broken.vtt", body=b"WEBVTT\n\nNu fungerar det.")
    second = episode_transcripts_fetch()

    assert (first.transcripts_stored, first.transcripts_failed) == (1, 2)
    assert (second.transcripts_stored, second.transcripts_failed) == (1, 1)
    stored = dict(EpisodeTranscript.objects.values_list("episode__episode_id", "content_type"))
    assert set(stored) == {"good", "broken"}
    assert stored["good"] == "text/vtt"
    assert len(server.requests_to("/good.vtt")) == 1


def test_a_podcast_feed_is_refused_without_an_episode_store(make_feed):
    feed = make_feed(kind=FeedKind.PODCAST)

    with pytest.raises(ValueError, match="store_episodes"):
        feed_refresh(feed=feed)
