"""The ingest orchestrator: the step flags run exactly their step, and every step's report
reaches the run's line and the task result that /metrics reads."""

import io
from dataclasses import asdict

import pytest
from django.core.management import call_command

from news_site.ingest.services import Step, ingest_run
from news_site.news.models import Entry, Story
from news_site.search.models import EntryEmbedding

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]


@pytest.fixture
def apple_feed(server, private_fetching, rss, settings):
    settings.NEWS_LLM_BASE_URL = ""
    server.respond(
        "/ok.xml",
        body=rss([{"guid": "1", "link": "https://m.example/1", "title": "Apple släpper iOS"}]),
    )
    call_command("add_feed", server.url("/ok.xml"), "--no-discover", stdout=io.StringIO())
    return server


def _ingest(*flags: str) -> str:
    out = io.StringIO()
    call_command("ingest", *flags, stdout=out, stderr=io.StringIO())
    return out.getvalue().strip().splitlines()[-1]


def test_fetch_only_stores_entries_and_runs_no_later_step(apple_feed):
    line = _ingest("--fetch-only")

    assert Entry.objects.count() == 1
    assert not EntryEmbedding.objects.exists()
    assert not Story.objects.exists()
    assert Entry.objects.get().story_id is None
    assert line.startswith("feeds: 1 fetched")
    assert "embeddings:" not in line and "stories:" not in line and "transcripts:" not in line


def test_summarise_only_fetches_no_feed_and_runs_no_later_step(apple_feed):
    line = _ingest("--summarise-only")

    assert apple_feed.requests_to("/ok.xml") == []
    assert not Entry.objects.exists()
    assert line.startswith("feeds: 0 fetched")
    assert "stories:" not in line and "embeddings:" not in line


def test_a_later_full_run_does_the_remaining_steps(apple_feed):
    _ingest("--fetch-only")

    line = _ingest()

    assert Entry.objects.get().story_id is not None
    assert EntryEmbedding.objects.count() == 1
    assert "stories: 1 entries assigned, 1 new" in line


def test_the_clustering_report_reaches_the_task_result(apple_feed):
    report = ingest_run()

    counts = asdict(report)
    assert counts["stories_entries_assigned"] == 1
    assert counts["stories_created"] == 1
    assert counts["entries_embedded"] == 1
    assert counts["steps"] == [Step.FEEDS, Step.EMBEDDINGS, Step.TRANSCRIPTS, Step.STORIES]


def test_steps_run_only_those_chosen(apple_feed):
    report = ingest_run(steps=[Step.FEEDS, Step.STORIES])

    assert report.steps == [Step.FEEDS, Step.STORIES]
    assert report.stories_created == 1
    assert not EntryEmbedding.objects.exists()
