"""GET /api/v1/podd_episodes and /podd_episodes/:id, and the stored transcripts."""

from datetime import date

import pytest

from news_site.podcasts.models import EpisodeTranscript, PodcastEpisode
from news_site.podcasts.services import episode_transcripts_fetch
from tests.support.news_factories import EpisodeFactory

# Each test in a rolled-back transaction: requests run in-process (tests/support/inprocess.py).
pytestmark = pytest.mark.django_db

EPISODE_FIELDS = {
    "episode_id",
    "guid",
    "title",
    "description",
    "published_on",
    "duration_seconds",
    "page_url",
    "audio_url",
    "cover_url",
    "cover_thumb_url",
}


def _episode(guid: str, published_on: date, **values) -> PodcastEpisode:
    return EpisodeFactory(
        guid=guid,
        description="Om veckans nyheter.",
        published_on=published_on,
        duration_seconds=1800,
        audio_url=f"https://podd.example/{guid}.mp3",
        **values,
    )


def test_episodes_newest_first_with_the_spec_fields(http):
    _episode("ep-1", date(2026, 1, 1))
    _episode("ep-2", date(2026, 2, 1))

    body = http.get("/api/v1/podd_episodes").json()

    assert [e["guid"] for e in body["data"]] == ["ep-2", "ep-1"]
    assert set(body["data"][0]) == EPISODE_FIELDS
    assert body["data"][0]["published_on"] == "2026-02-01"
    assert body["data"][0]["duration_seconds"] == 1800


def test_episode_detail_has_chapters_sources_and_transcript_url(http):
    episode = _episode(
        "ep-7",
        date(2026, 3, 1),
        chapters=[{"start_seconds": 0, "title": "Intro", "url": ""}],
        sources=[{"title": "Källa", "url": "https://source.example/a"}],
        transcript_url="https://podd.example/ep-7.vtt",
    )

    data = http.get(f"/api/v1/podd_episodes/{episode.episode_id}").json()["data"]

    assert set(data) == EPISODE_FIELDS | {"chapters", "sources", "transcript_url"}
    assert data["chapters"] == [{"start_seconds": 0, "title": "Intro", "url": ""}]
    assert data["sources"] == [{"title": "Källa", "url": "https://source.example/a"}]
    assert data["transcript_url"] == "https://podd.example/ep-7.vtt"
    assert http.get("/api/v1/podd_episodes/nope").status_code == 404


def test_include_transcript_attaches_the_stored_text_fetched_once(http, server, private_fetching):
    server.respond("/ep-8.vtt", body=b"WEBVTT\n\n00:00.000 --> 00:02.000\nHej!")
    episode = _episode("ep-8", date(2026, 3, 2), transcript_url=server.url("/ep-8.vtt"))
    path = f"/api/v1/podd_episodes/{episode.episode_id}"

    before = http.get(path, params={"include_transcript": "true"})
    assert before.json()["data"]["transcript"] is None
    assert server.requests_to("/ep-8.vtt") == []

    assert episode_transcripts_fetch().transcripts_stored == 1
    assert episode_transcripts_fetch().transcripts_stored == 0

    after = http.get(path, params={"include_transcript": "true"})
    plain = http.get(path)
    assert after.json()["data"]["transcript"].endswith("Hej!")
    assert "transcript" not in plain.json()["data"]
    assert len(server.requests_to("/ep-8.vtt")) == 1
    assert EpisodeTranscript.objects.count() == 1
    bad = http.get(path, params={"include_transcript": "maybe"})
    assert bad.status_code == 400
