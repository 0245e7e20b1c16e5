"""The service's own podcast feed: iTunes and Podcasting 2.0 tags become episodes."""

import json
import re

import pytest

from news_site.ingest.services import ingest_run
from news_site.news.models import FeedKind
from news_site.podcasts.models import PodcastEpisode

pytestmark = pytest.mark.django_db


def _podcast(base: str) -> bytes:
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"
     xmlns:podcast="https://podcastindex.org/namespace/1.0">
<channel><title>Podden</title><link>https://podd.example/</link>
<itunes:image href="https://podd.example/cover.jpg"/>
<item><title>Avsnitt 12: iPhone 17</title><guid isPermaLink="false">podd-12</guid>
<link>https://podd.example/12</link><pubDate>Mon, 03 Mar 2025 06:00:00 +0000</pubDate>
<itunes:duration>01:02:03</itunes:duration>
<enclosure url="https://podd.example/12.mp3" length="1234" type="audio/mpeg"/>
<podcast:chapters url="{base}/12-chapters.json" type="application/json+chapters"/>
<podcast:transcript url="https://podd.example/12.vtt" type="text/vtt"/>
<description>&lt;p&gt;Vi pratar om
&lt;a href="https://mac.example/iphone17"&gt;iPhone 17&lt;/a&gt;.&lt;/p&gt;</description>
</item>
<item><title>Utan ljud</title><guid>podd-x</guid><link>https://podd.example/x</link></item>
</channel></rss>""".encode()


def test_episodes_are_stored_with_duration_cover_chapters_transcript_and_sources(
    server, private_fetching, make_feed
):
    chapters = {
        "version": "1.2.0",
        "chapters": [{"startTime": 0, "title": "Intro"}, {"startTime": 95.5, "title": "iPhone 17"}],
    }
    server.respond("/podcast.xml", body=_podcast(server.url("")))
    server.respond("/12-chapters.json", body=json.dumps(chapters).encode())
    make_feed(url=server.url("/podcast.xml"), kind=FeedKind.PODCAST, language="sv")

    report = ingest_run()

    assert report.episodes_new == 1
    episode = PodcastEpisode.objects.get()
    assert episode.guid == "podd-12"
    # The path id is the title's slug and a hash of the GUID (podcasts/identifiers.py).
    assert re.fullmatch("avsnitt-12-iphone-17-[0-9a-f]{12}", episode.episode_id)
    assert episode.duration_seconds == 3723
    assert str(episode.published_on) == "2025-03-03"
    assert episode.audio_url == "https://podd.example/12.mp3"
    assert episode.cover_url == "https://podd.example/cover.jpg"
    assert episode.transcript_url == "https://podd.example/12.vtt"
    assert episode.chapters == [
        {"start_seconds": 0, "title": "Intro", "url": ""},
        {"start_seconds": 95, "title": "iPhone 17", "url": ""},
    ]
    assert episode.sources == [{"title": "iPhone 17", "url": "https://mac.example/iphone17"}]
    assert episode.description == "Vi pratar om iPhone 17."
