"""A failing source is visible on the health page, and when it pauses the editors get one
mail, once per pause, through the real ingest run against a source that keeps failing."""

import threading
from datetime import timedelta

import pytest
from django.core import mail
from django.core.management import call_command
from django.db import connections
from django.utils import timezone

from news_site.news.health import paused_sources_notify
from news_site.news.models import Feed, FetchOutcome
from news_site.news.tasks import feed_fetch_task
from tests.support.shared_factories import UserFactory

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]


@pytest.fixture
def editors():
    UserFactory(username="anna", email="anna@redaktion.example")
    UserFactory(username="bo", email="bo@redaktion.example")
    UserFactory(username="läsare", email="reader@example.com", is_staff=False)


def _failing_for(server, make_feed, path: str, *, days: float) -> Feed:
    server.respond(path, status=503, body=b"down")
    long_ago = timezone.now() - timedelta(days=days)
    return make_feed(
        title=f"Källa {path}",
        url=server.url(path),
        error_count=7,
        failing_since=long_ago,
        last_error="HTTP 503",
        next_check_at=long_ago,
    )


def _ingest() -> None:
    call_command("ingest", "--fetch-only", verbosity=0)


def test_sources_that_pause_in_one_run_are_announced_in_one_mail(
    server, private_fetching, make_feed, editors
):
    first = _failing_for(server, make_feed, "/a.xml", days=4)
    second = _failing_for(server, make_feed, "/b.xml", days=5)

    _ingest()

    first.refresh_from_db()
    second.refresh_from_db()
    assert first.paused_at and second.paused_at
    assert len(mail.outbox) == 1
    notice = mail.outbox[0]
    assert sorted(notice.to) == ["anna@redaktion.example", "bo@redaktion.example"]
    assert "2 källor pausade" in notice.subject
    assert first.url in notice.body and second.url in notice.body
    assert "HTTP 503" in notice.body


def test_a_pause_is_announced_once_and_again_only_after_a_resume(
    server, private_fetching, make_feed, editors
):
    feed = _failing_for(server, make_feed, "/c.xml", days=4)
    _ingest()
    _ingest()
    assert len(mail.outbox) == 1

    # The editor resumes it (as "Hämta nu" does); it fails on and pauses again.
    Feed.objects.filter(pk=feed.pk).update(paused_at=None, next_check_at=timezone.now())
    _ingest()
    assert len(mail.outbox) == 2


def test_a_source_failing_for_less_than_the_pause_sends_nothing(
    server, private_fetching, make_feed, editors
):
    _failing_for(server, make_feed, "/d.xml", days=0.5)
    _ingest()
    assert mail.outbox == []


def test_the_health_page_lists_paused_and_failing_sources_with_their_reason(
    editor_client, make_feed
):
    now = timezone.now()
    make_feed(title="Frisk", url="https://ok.example/feed")
    make_feed(
        title="Pausad källa",
        url="https://paused.example/feed",
        error_count=30,
        failing_since=now - timedelta(days=4),
        paused_at=now,
        last_error="HTTP 410",
    )
    make_feed(
        title="Felande källa",
        url="https://failing.example/feed",
        error_count=2,
        failing_since=now - timedelta(hours=3),
        last_error="timeout: no answer from failing.example",
    )

    listing = editor_client.get("/admin/news/feed/").content.decode()
    assert "Källornas hälsa" in listing
    page = editor_client.get("/admin/news/feed/health/")
    html = page.content.decode()

    assert page.status_code == 200
    paused = html.split('id="health-paused"')[1].split("</table>")[0]
    failing = html.split('id="health-failing"')[1].split("</table>")[0]
    assert "Pausad källa" in paused and "HTTP 410" in paused
    assert "Felande källa" in failing and "timeout: no answer" in failing
    assert "Frisk" not in html


def _paused(make_feed, title: str) -> Feed:
    now = timezone.now()
    return make_feed(
        title=title,
        url=f"https://{title.lower()}.example/feed",
        error_count=30,
        failing_since=now - timedelta(days=4),
        paused_at=now,
        last_error="HTTP 503",
    )


def test_a_notice_that_cannot_be_sent_is_sent_by_the_next_run(editors, make_feed, settings):
    _paused(make_feed, "Tyst")
    # A mail server that refuses: the run fails to tell, and nothing is marked as told.
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT, settings.EMAIL_TIMEOUT = "127.0.0.1", 9, 2
    with pytest.raises(OSError):
        paused_sources_notify(now=timezone.now())
    assert Feed.objects.get(title="Tyst").pause_notified_at is None

    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    assert paused_sources_notify(now=timezone.now()) == 1
    assert len(mail.outbox) == 1 and "Tyst" in mail.outbox[0].body
    assert paused_sources_notify(now=timezone.now()) == 0


@pytest.mark.django_db(transaction=True)
def test_runs_at_once_name_each_pause_once(editors, make_feed):
    """The schedule's run and one an operator started, at the same moment: each pause is in
    one mail only (each claimed by a conditional update before its mail is sent)."""
    for round_ in range(5):
        _paused(make_feed, f"Samtidig{round_}")
        start = threading.Barrier(4)
        named: list[int] = []

        def run(start: threading.Barrier, named: list[int]) -> None:
            start.wait()
            try:
                named.append(paused_sources_notify(now=timezone.now()))
            finally:
                connections.close_all()

        threads = [threading.Thread(target=run, args=(start, named)) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert sorted(named) == [0, 0, 0, 1]
        assert sum(f"Samtidig{round_}" in message.body for message in mail.outbox) == 1


def _source_holding_its_first_answer(server, path: str) -> tuple[threading.Event, threading.Event]:
    """A failing source that keeps its first request waiting until released; the events are
    (arrived, release)."""
    arrived, release = threading.Event(), threading.Event()

    def route(request) -> None:
        if len(server.requests_to(path)) == 1:
            arrived.set()
            release.wait(timeout=60)
        request.send_response(503)
        request.send_header("Content-Length", "4")
        request.end_headers()
        request.wfile.write(b"down")

    server.route(path, route)
    return arrived, release


def _in_thread(work, results: list) -> threading.Thread:
    def run() -> None:
        try:
            results.append(work())
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


@pytest.mark.django_db(transaction=True)
def test_fetch_now_during_the_schedules_run_fetches_once_and_announces_one_pause(
    server, private_fetching, make_feed, editors
):
    """The editor's "Fetch now" makes a failing source due; the schedule's run comes while the
    worker's fetch waits on the source. The source is fetched once, paused once, told once."""
    private_fetching.NEWS_FETCH_TIMEOUT_SECONDS = 60
    feed = _failing_for(server, make_feed, "/e.xml", days=4)
    arrived, release = _source_holding_its_first_answer(server, "/e.xml")
    outcomes: list[str] = []
    worker = _in_thread(lambda: feed_fetch_task.call(feed.pk), outcomes)
    assert arrived.wait(timeout=60)

    _ingest()
    release.set()
    worker.join(timeout=60)
    _ingest()

    assert outcomes == [FetchOutcome.FAILED]
    assert len(server.requests_to("/e.xml")) == 1
    assert len(mail.outbox) == 1


@pytest.mark.django_db(transaction=True)
def test_fetch_now_while_the_schedules_run_fetches_the_source_leaves_it_to_that_run(
    server, private_fetching, make_feed, editors
):
    private_fetching.NEWS_FETCH_TIMEOUT_SECONDS = 60
    feed = _failing_for(server, make_feed, "/f.xml", days=4)
    arrived, release = _source_holding_its_first_answer(server, "/f.xml")
    ran: list[None] = []
    run = _in_thread(_ingest, ran)
    assert arrived.wait(timeout=60)

    outcome = feed_fetch_task.call(feed.pk)
    release.set()
    run.join(timeout=60)

    assert outcome == "taken"
    assert len(server.requests_to("/f.xml")) == 1
    assert len(mail.outbox) == 1
