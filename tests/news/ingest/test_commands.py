"""The operator commands: add_feed and ingest (the one-line summary, --enqueue)."""

import io

import pytest
from django.core.management import CommandError, call_command
from django_tasks_db.models import DBTaskResult

from news_site.news.models import Feed

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]


def test_add_feed_registers_a_source_once(capsys):
    call_command(
        "add_feed",
        "https://mac.example/feed.xml",
        "--title",
        "Mac",
        "--language",
        "sv",
        "--no-discover",
    )
    call_command("add_feed", "https://mac.example/feed.xml", "--no-discover")

    feed = Feed.objects.get()
    assert (feed.title, feed.language) == ("Mac", "sv")
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("added: feed")
    assert out[1].startswith("already registered")


def test_add_feed_refuses_what_is_not_an_http_url():
    with pytest.raises(CommandError):
        call_command("add_feed", "file:///etc/passwd")


def test_ingest_prints_a_one_line_summary(server, private_fetching, rss, settings):
    settings.NEWS_LLM_BASE_URL = ""
    server.respond(
        "/ok.xml", body=rss([{"guid": "1", "link": "https://m.example/1", "title": "Apple"}])
    )
    server.respond("/down.xml", status=500)
    call_command("add_feed", server.url("/ok.xml"))
    call_command("add_feed", server.url("/down.xml"), "--no-discover")
    out = io.StringIO()

    call_command("ingest", stdout=out, stderr=io.StringIO())

    assert out.getvalue().strip().splitlines()[-1] == (
        "feeds: 1 fetched, 0 not modified, 1 failed, 0 items skipped; entries: 1 new, "
        "0 summarised, 0 summaries failed; podcast episodes: 0 new; "
        "embeddings: 1 entries embedded; "
        "transcripts: 0 stored, 0 failed; stories: 1 entries assigned, 1 new (0 continuing an "
        "older story), 0 joined, 0 reopened, 0 failed; 1 texts written (0 by the model)"
    )


def test_ingest_enqueue_puts_a_task_on_the_queue():
    out = io.StringIO()

    call_command("ingest", "--enqueue", stdout=out)

    task = DBTaskResult.objects.get()
    assert task.task_path == "news_site.ingest.tasks.ingest_task"
    assert out.getvalue().startswith("queued ingest task")


# The worker closes database connections between tasks, as in production, so this test
# commits for real instead of running inside one rolled-back transaction.
@pytest.mark.django_db(transaction=True)
def test_a_worker_runs_the_queued_ingest(server, private_fetching, rss, settings):
    settings.NEWS_LLM_BASE_URL = ""
    server.respond(
        "/ok.xml", body=rss([{"guid": "1", "link": "https://m.example/1", "title": "Apple"}])
    )
    call_command("add_feed", server.url("/ok.xml"))
    call_command("ingest", "--enqueue", stdout=io.StringIO())

    call_command("db_worker", "--batch", "--no-startup-delay", "--no-reload", stdout=io.StringIO())

    task = DBTaskResult.objects.get(task_path="news_site.ingest.tasks.ingest_task")
    assert task.status == "SUCCESSFUL"
    assert task.return_value["feeds_fetched"] == 1
    assert task.return_value["entries_new"] == 1


def test_add_feed_finds_the_feed_behind_a_site_address(server, private_fetching, rss, capsys):
    server.respond(
        "/",
        body=b'<html><head><link rel="alternate" type="application/rss+xml" '
        b'href="/nyheter/rss.xml"></head><body>Sajten</body></html>',
        headers={"Content-Type": "text/html; charset=utf-8"},
    )
    server.respond(
        "/nyheter/rss.xml",
        body=rss([{"guid": "1", "link": "https://m.example/1", "title": "Apple"}]),
    )

    call_command("add_feed", server.url("/"), "--language", "sv")

    feed = Feed.objects.get()
    assert feed.url == server.url("/nyheter/rss.xml")
    assert (feed.title, feed.site_url) == ("Källan", "https://source.example/")
    assert capsys.readouterr().out.startswith("added: feed")


def test_add_feed_says_why_no_feed_was_found(server, private_fetching):
    server.respond(
        "/",
        body=b"<html><body>Ingen feed</body></html>",
        headers={"Content-Type": "text/html; charset=utf-8"},
    )
    with pytest.raises(CommandError, match=r"no_feed.*--no-discover"):
        call_command("add_feed", server.url("/"))
    assert not Feed.objects.exists()
