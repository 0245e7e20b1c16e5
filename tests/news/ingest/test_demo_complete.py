"""The quick start's demo is complete: transcripts are stored, and every link it shows a user
points at a host that exists (example.com, reserved for documentation), none at a made-up one."""

import re

import pytest

from news_site.ingest.demo import demo_load
from news_site.news.models import Entry, Feed
from news_site.podcasts.models import PodcastEpisode

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]

HOST = re.compile(r"^https://([^/]+)/")


def test_demo_episodes_come_with_their_transcripts(client) -> None:
    demo_load()
    episodes = list(PodcastEpisode.objects.all())
    assert len(episodes) == 3
    for episode in episodes:
        answer = client.get(
            f"/api/v1/podd_episodes/{episode.episode_id}", {"include_transcript": "true"}
        )
        transcript = answer.json()["data"]["transcript"]
        assert transcript.startswith("WEBVTT"), transcript


def test_demo_links_point_at_hosts_that_exist() -> None:
    demo_load()
    links = [
        *Feed.objects.values_list("url", flat=True),
        *Feed.objects.exclude(site_url="").values_list("site_url", flat=True),
        *Entry.objects.values_list("url", flat=True),
        *Entry.objects.exclude(image_url="").values_list("image_url", flat=True),
    ]
    for episode in PodcastEpisode.objects.all():
        links += [episode.page_url, episode.audio_url, episode.cover_url, episode.transcript_url]
    assert len(links) > 50
    hosts = {HOST.match(link)[1] for link in links if link}
    assert hosts == {"example.com"}, hosts
