"""A hostile podcast feed through the real `ingest`: chapters with NaN, infinite and huge
start times, transcripts in UTF-16 with NUL, a missing transcript, and the episodes' surfaces
still valid."""

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

from news_site.news.models import Entry, Feed
from news_site.podcasts.models import PodcastEpisode
from tests.news.hostile import (
    GOOD_TITLE,
    assert_json_urls,
    assert_surfaces_valid,
    good,
    rss,
    serve,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.every_backend]


def test_hostile_podcast_feed_chapters_and_transcripts(server, private_fetching, capsys):
    chapters_nan = (
        b'{"chapters": [{"startTime": NaN, "title": "a"}, {"startTime": Infinity, "title": "b"},'
        b' {"startTime": 1e400, "title": "c"},'
        b' {"startTime": 60, "title": "OK <script>x</script>", "url": "javascript:alert(1)"}]}'
    )
    server.respond(
        "/chapters.json", body=chapters_nan, headers={"Content-Type": "application/json"}
    )
    utf16 = "Transkript på svenska\x00 med NUL".encode("utf-16")
    server.respond("/t16.txt", body=utf16, headers={"Content-Type": "text/plain"})
    server.respond("/t404.txt", status=404)

    def episode(n: int, duration: str, extra: str = "") -> str:
        return (
            f'<item><guid isPermaLink="false">ep-{n}</guid><title>Avsnitt {n} &#0;</title>'
            f"<link>https://podd.example/{n}</link><description>Om iPhone.</description>"
            f'<enclosure url="https://podd.example/{n}.mp3" type="audio/mpeg" length="1"/>'
            f"<itunes:duration>{duration}</itunes:duration>"
            f"<pubDate>Mon, 01 Jan 0001 00:00:00 +0100</pubDate>{extra}</item>"
        )

    body = rss(
        [
            episode(
                1,
                "1e400",
                f'<podcast:chapters url="{server.url("/chapters.json")}" '
                'type="application/json+chapters"/>',
            ),
            episode(
                2,
                "99999999999999999999:00:00",
                f'<podcast:transcript url="{server.url("/t16.txt")}" type="text/plain"/>',
            ),
            episode(
                3, "NaN", f'<podcast:transcript url="{server.url("/t404.txt")}" type="text/plain"/>'
            ),
            episode(4, "01:02:03"),
        ]
    )
    call_command("add_feed", serve(server, "/podd.xml", body), "--podcast")
    call_command("add_feed", serve(server, "/good.xml", rss([good("0")])))
    for _run in range(7):
        call_command("ingest")
        Feed.objects.update(next_check_at=timezone.now() - timedelta(seconds=1), body_hash="")
    line = capsys.readouterr().out

    assert "episodes" in line
    assert Entry.objects.filter(title=f"{GOOD_TITLE} 0").exists()
    episodes = {e.guid: e for e in PodcastEpisode.objects.all()}
    assert set(episodes) == {"ep-1", "ep-2", "ep-3", "ep-4"}
    assert episodes["ep-1"].duration_seconds is None and episodes["ep-4"].duration_seconds == 3723
    assert [c["start_seconds"] for c in episodes["ep-1"].chapters] == [60]
    assert episodes["ep-1"].chapters[0]["url"] == ""
    assert "\x00" not in episodes["ep-1"].title
    assert episodes["ep-2"].transcript.text.startswith("Transkript på svenska med NUL")
    # The failing transcript was tried a bounded number of times, with its reason kept.
    assert episodes["ep-3"].transcript_attempts == 5 and "404" in episodes["ep-3"].transcript_error
    client = Client()
    for path in (
        "/api/v1/podd_episodes",
        f"/api/v1/podd_episodes/{episodes['ep-1'].episode_id}",
        f"/api/v1/podd_episodes/{episodes['ep-2'].episode_id}",
    ):
        response = client.get(path)
        assert response.status_code == 200, path
        assert_json_urls(response.json())
    assert_surfaces_valid()
