"""The feeds step fetches in parallel, politely: sources on loopback servers that hold each
request (injected latency) and record how many of ours they see at once."""

import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler

import pytest

from news_site.ingest.services import Step, ingest_run
from news_site.news.models import Feed, FetchOutcome
from tests.support.localserver import LocalServer

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]

# A bound for a broken pool (requests never overlap), not a wait a passing run spends.
_NEVER = 20


class InFlight:
    """Counts the requests being answered at once, across servers, and the most seen."""

    def __init__(self, *, hold_seconds: float = _NEVER) -> None:
        self.hold_seconds = hold_seconds
        self.now = 0
        self.most = 0
        self.changed = threading.Condition()

    def hold(self, request: BaseHTTPRequestHandler, until: Callable[[int], bool], *, body: bytes):
        with self.changed:
            self.now += 1
            self.most = max(self.most, self.now)
            self.changed.notify_all()
            self.changed.wait_for(lambda: until(self.now), timeout=self.hold_seconds)
        try:
            request.send_response(200)
            request.send_header("Content-Type", "application/rss+xml")
            request.send_header("Content-Length", str(len(body)))
            request.end_headers()
            request.wfile.write(body)
        finally:
            with self.changed:
                self.now -= 1
                self.changed.notify_all()


@pytest.fixture
def hosts() -> Iterator[Callable[[int], list[LocalServer]]]:
    """`hosts(n)`: n servers, each on its own loopback address (a host of its own)."""
    started: list[LocalServer] = []

    def make(count: int) -> list[LocalServer]:
        for number in range(count):
            server = LocalServer(host=f"127.0.0.{number + 2}")
            server.thread.start()
            started.append(server)
        return started[-count:]

    yield make
    for server in started:
        server.stopping.set()
        server.httpd.shutdown()
        server.httpd.server_close()


def _item(source: int) -> list[dict]:
    return [{"guid": f"s{source}", "link": f"https://s{source}.example/1", "title": "Apple"}]


def test_sources_on_different_hosts_are_fetched_at_the_same_time(
    hosts, private_fetching, make_feed, rss, settings
):
    """Each source answers only once every source's request has arrived: fetched one after
    another, the first would wait in vain and fail on its deadline."""
    settings.NEWS_FETCH_TIMEOUT_SECONDS = _NEVER + 5
    settings.NEWS_FETCH_CONCURRENCY = 4
    flight = InFlight()
    servers = hosts(4)
    for number, server in enumerate(servers):
        body = rss(_item(number))
        server.route(
            "/feed.xml",
            lambda request, body=body: flight.hold(request, lambda now: now >= 4, body=body),
        )
        make_feed(url=server.url("/feed.xml"))

    report = ingest_run(steps=[Step.FEEDS])

    assert flight.most == 4
    assert (report.feeds_fetched, report.feeds_failed, report.entries_new) == (4, 0, 4)
    assert set(Feed.objects.values_list("last_outcome", flat=True)) == {FetchOutcome.OK}


def test_one_host_never_sees_more_than_the_per_host_limit(
    server, private_fetching, make_feed, rss, settings
):
    """Five feeds of one site and a pool of eight threads: the site gets two requests at a
    time. Each request is held until a third one arrives or a short while passes, so a pool
    that ignored the limit would be seen with three or more in flight."""
    settings.NEWS_FETCH_CONCURRENCY = 8
    settings.NEWS_FETCH_PER_HOST = 2
    # The hold: long enough for a third request to arrive if the pool sent one.
    flight = InFlight(hold_seconds=0.3)
    for number in range(5):
        body = rss(_item(number))
        server.route(
            f"/feed-{number}.xml",
            lambda request, body=body: flight.hold(request, lambda now: now >= 3, body=body),
        )
        make_feed(url=server.url(f"/feed-{number}.xml"))

    report = ingest_run(steps=[Step.FEEDS])

    assert flight.most == 2
    assert (report.feeds_fetched, report.entries_new) == (5, 5)


def test_a_slow_source_does_not_hold_back_the_others(
    hosts, private_fetching, make_feed, rss, settings
):
    """The slow source answers only once every fast source has been asked: in one queue behind
    it they would never be, and it would answer after its whole wait."""
    settings.NEWS_FETCH_TIMEOUT_SECONDS = _NEVER + 5
    slow, *fast = hosts(3)
    make_feed(url=slow.url("/feed.xml"))
    for number, server in enumerate(fast):
        server.respond(
            "/feed.xml",
            body=rss(_item(number)),
            headers={"Content-Type": "application/rss+xml"},
        )
        make_feed(url=server.url("/feed.xml"))
    asked = threading.Event()

    def slow_answer(request: BaseHTTPRequestHandler) -> None:
        ticking = threading.Event()
        for _ in range(_NEVER * 100):
            if all(server.requests_to("/feed.xml") for server in fast):
                asked.set()
                break
            ticking.wait(0.01)
        body = rss(_item(99))
        request.send_response(200)
        request.send_header("Content-Type", "application/rss+xml")
        request.send_header("Content-Length", str(len(body)))
        request.end_headers()
        request.wfile.write(body)

    slow.route("/feed.xml", slow_answer)

    report = ingest_run(steps=[Step.FEEDS])

    assert asked.is_set()
    assert (report.feeds_fetched, report.feeds_failed) == (3, 0)
