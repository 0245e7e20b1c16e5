"""The ingestion pipeline against feeds served by a loopback HTTP server (no mocked HTTP)."""

import gzip
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from news_site.ingest.services import ingest_run
from news_site.news.feeds import feed_claim, feed_refresh
from news_site.news.models import Entry, Feed, FetchOutcome

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]


def _items(count: int, *, prefix: str = "a", hours_apart: int = 6) -> list[dict]:
    now = timezone.now()
    return [
        {
            "guid": f"{prefix}-{n}",
            "link": f"https://source.example/{prefix}/{n}",
            "title": f"Apple visar iPhone nummer {n}",
            "description": f"Apple har visat en ny iPhone. Den är nummer {n}. Mer följer.",
            # Half an hour inside each period, so counting a week's posts is not a race.
            "pubDate": (now - timedelta(hours=hours_apart * n, minutes=-30)).strftime(
                "%a, %d %b %Y %H:%M:%S +0000"
            ),
        }
        for n in range(1, count + 1)
    ]


def test_a_feed_is_fetched_and_its_items_stored_with_offline_summaries(
    server, private_fetching, make_feed, rss
):
    server.respond(
        "/feed.xml",
        body=rss(_items(3)),
        headers={"Content-Type": "application/rss+xml", "ETag": '"v1"'},
    )
    feed = make_feed(url=server.url("/feed.xml"), language="sv")

    report = ingest_run()

    assert (report.feeds_fetched, report.entries_new) == (1, 3)
    feed.refresh_from_db()
    assert feed.last_outcome == FetchOutcome.OK
    assert feed.etag == '"v1"'
    entry = Entry.objects.get(guid="a-1")
    assert entry.summary_original.startswith("Apple har visat en ny iPhone.")
    assert entry.platform_relevant
    assert {tag.name for tag in entry.tags.all()} == {"iPhone"}
    # The request identified us and asked for a feed.
    _method, _path, headers, _body = server.requests_to("/feed.xml")[0]
    assert headers["User-Agent"].startswith("NyhetstjanstenBot/")


def test_a_second_fetch_is_conditional_and_a_304_changes_nothing(
    server, private_fetching, make_feed, rss
):
    server.respond(
        "/feed.xml",
        body=rss(_items(2)),
        headers={"ETag": '"v1"', "Last-Modified": "Mon, 03 Mar 2025 06:00:00 GMT"},
    )
    feed = make_feed(url=server.url("/feed.xml"))
    feed_refresh(feed=feed)
    server.respond("/feed.xml", status=304)

    refresh = feed_refresh(feed=feed)

    assert refresh.outcome == FetchOutcome.NOT_MODIFIED
    _method, _path, headers, _body = server.requests_to("/feed.xml")[-1]
    assert headers["If-None-Match"] == '"v1"'
    assert headers["If-Modified-Since"] == "Mon, 03 Mar 2025 06:00:00 GMT"
    assert Entry.objects.count() == 2


def test_a_server_ignoring_conditional_headers_is_caught_by_the_body_hash(
    server, private_fetching, make_feed, rss
):
    server.respond("/feed.xml", body=rss(_items(2)))
    feed = make_feed(url=server.url("/feed.xml"))
    feed_refresh(feed=feed)

    refresh = feed_refresh(feed=feed)

    assert refresh.outcome == FetchOutcome.UNCHANGED


def test_a_server_error_counts_backs_off_honours_retry_after_and_keeps_the_entries(
    server, private_fetching, make_feed, rss
):
    server.respond("/feed.xml", body=rss(_items(2)))
    feed = make_feed(url=server.url("/feed.xml"))
    feed_refresh(feed=feed)
    server.respond("/feed.xml", status=503, headers={"Retry-After": "7200"})

    before = timezone.now()
    refresh = feed_refresh(feed=feed)

    feed.refresh_from_db()
    assert refresh.outcome == FetchOutcome.FAILED
    assert (feed.error_count, feed.last_error, feed.last_http_status) == (1, "HTTP 503", 503)
    assert feed.next_check_at >= before + timedelta(seconds=7200)
    assert Entry.objects.count() == 2


def test_the_backoff_grows_with_each_failure_and_is_capped_at_a_day(
    server, private_fetching, make_feed
):
    server.respond("/feed.xml", status=500)
    feed = make_feed(url=server.url("/feed.xml"))
    delays = []
    for _ in range(12):
        before = timezone.now()
        feed_refresh(feed=feed)
        feed.refresh_from_db()
        delays.append((feed.next_check_at - before).total_seconds())

    assert delays[1] > delays[0]
    assert max(delays) <= 24 * 3600 + 1
    assert feed.error_count == 12


def test_a_feed_failing_for_days_is_paused(server, private_fetching, make_feed):
    server.respond("/feed.xml", status=500)
    feed = make_feed(
        url=server.url("/feed.xml"),
        failing_since=timezone.now() - timedelta(days=4),
        error_count=40,
    )

    feed_refresh(feed=feed)

    feed.refresh_from_db()
    assert feed.paused_at is not None
    # A paused feed is not fetched again until an editor resumes it.
    feed.next_check_at = timezone.now() - timedelta(minutes=1)
    feed.save()
    assert ingest_run().feeds_failed == 0


def test_malformed_xml_wrong_content_types_and_bombs_fail_alone(
    server, private_fetching, make_feed, rss
):
    bomb = gzip.compress(b"<rss>" + b" " * (20 * 1024 * 1024), compresslevel=9)
    server.respond("/broken.xml", body=b"<rss><channel><title>Trasig")
    server.respond(
        "/html.xml", body=b"<html><body>Hej</body></html>", headers={"Content-Type": "text/html"}
    )
    server.respond("/bomb.xml", body=bomb, headers={"Content-Encoding": "gzip"})
    server.respond("/good.xml", body=rss(_items(2)))
    private_fetching.NEWS_FETCH_MAX_BYTES = 1024 * 1024
    broken, html, bombed, good = (
        make_feed(url=server.url(path))
        for path in ("/broken.xml", "/html.xml", "/bomb.xml", "/good.xml")
    )

    report = ingest_run()

    assert (report.feeds_fetched, report.feeds_failed, report.entries_new) == (1, 3, 2)
    for failed in (broken, html, bombed):
        failed.refresh_from_db()
        assert failed.last_outcome == FetchOutcome.FAILED
    assert "not a feed" in html.last_error
    assert bombed.last_error.startswith("too_large")
    assert Entry.objects.filter(feed=good).count() == 2


def test_a_slow_server_times_out_without_holding_the_run(server, private_fetching, make_feed):
    def drip(request):
        request.send_response(200)
        request.end_headers()
        for _ in range(300):
            if server.stopping.is_set():
                return
            request.wfile.write(b" ")
            request.wfile.flush()
            time.sleep(0.2)

    server.route("/slow.xml", drip)
    feed = make_feed(url=server.url("/slow.xml"))
    private_fetching.NEWS_FETCH_TIMEOUT_SECONDS = 1

    started = time.monotonic()
    feed_refresh(feed=feed)

    feed.refresh_from_db()
    # The drip lasts a minute; the slack is for a loaded machine, not part of the deadline.
    assert time.monotonic() - started < 15
    assert feed.last_error.startswith("timeout")


def test_private_addresses_are_refused_unless_allowed(server, settings, make_feed, rss):
    settings.FETCH_ALLOW_PRIVATE_NETWORKS = False
    server.respond("/feed.xml", body=rss(_items(1)))
    feed = make_feed(url=server.url("/feed.xml"))

    feed_refresh(feed=feed)

    feed.refresh_from_db()
    assert feed.last_error.startswith("blocked_address")
    assert server.seen == []


def test_a_permanent_redirect_moves_the_feed_and_a_temporary_one_does_not(
    server, private_fetching, make_feed, rss
):
    server.respond("/new.xml", body=rss(_items(1)))
    server.respond("/moved.xml", status=301, headers={"Location": server.url("/new.xml")})
    server.respond("/elsewhere.xml", status=302, headers={"Location": server.url("/new.xml")})
    moved = make_feed(url=server.url("/moved.xml"))
    temporary = make_feed(url=server.url("/elsewhere.xml"))

    feed_refresh(feed=moved)
    feed_refresh(feed=temporary)

    moved.refresh_from_db()
    temporary.refresh_from_db()
    assert moved.url == server.url("/new.xml")
    assert temporary.url == server.url("/elsewhere.xml")


def test_the_schedule_follows_the_posting_frequency_and_the_ttl(
    server, private_fetching, make_feed, rss
):
    server.respond("/busy.xml", body=rss(_items(28, prefix="b", hours_apart=6)))
    server.respond("/ttl.xml", body=rss(_items(28, prefix="t", hours_apart=6), ttl=600))
    busy = make_feed(url=server.url("/busy.xml"))
    slow = make_feed(url=server.url("/ttl.xml"))

    feed_refresh(feed=busy)
    feed_refresh(feed=slow)

    busy.refresh_from_db()
    slow.refresh_from_db()
    # 28 posts in a week: one every 6 hours.
    assert busy.check_interval_seconds == 6 * 3600
    # The feed's ttl of 600 minutes asks for less.
    assert slow.check_interval_seconds == 600 * 60


def test_overlapping_runs_do_not_fetch_the_same_feed_twice(
    server, private_fetching, make_feed, rss
):
    server.respond("/feed.xml", body=rss(_items(1)))
    feed = make_feed(url=server.url("/feed.xml"))
    stale_copy = Feed.objects.get(pk=feed.pk)

    ingest_run()

    assert not feed_claim(feed=stale_copy, now=timezone.now())
    assert len(server.requests_to("/feed.xml")) == 1
