"""Publish first: the scheduled run's feeds step makes an entry public on its own; the model's
work (embeddings) and the stories follow in a processing task on the worker."""

import io

import pytest
from django.core.management import call_command
from django_tasks_db.models import DBTaskResult

from news_site.ingest.selectors import INGEST_TASK_PATH, PROCESS_TASK_PATH
from news_site.ingest.tasks import ingest_task
from news_site.news.models import Entry
from news_site.search.models import EntryEmbedding
from tests.prometheus import sample, scrape

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]


@pytest.fixture
def apple_source(server, private_fetching, rss, settings):
    settings.NEWS_LLM_BASE_URL = ""
    server.respond(
        "/ok.xml",
        body=rss([{"guid": "1", "link": "https://m.example/1", "title": "Apple släpper iOS 26"}]),
    )
    call_command("add_feed", server.url("/ok.xml"), "--no-discover", stdout=io.StringIO())
    return server


def test_the_feeds_task_publishes_before_any_embedding_or_story(apple_source, http):
    report = ingest_task.call()

    entry = Entry.objects.get()
    answer = http.get(f"/api/v1/entries/{entry.pk}")
    assert answer.status_code == 200
    assert answer.json()["data"]["id"] == entry.pk
    assert entry.pk in [item["id"] for item in http.get("/api/v1/entries").json()["data"]]
    # Nothing of the model's or the clustering's work yet: a processing pass is queued.
    assert not EntryEmbedding.objects.exists()
    assert entry.story_id is None
    assert report["steps"] == ["feeds"]
    queued = DBTaskResult.objects.get()
    assert (queued.task_path, queued.status) == (PROCESS_TASK_PATH, "READY")


def test_one_waiting_processing_pass_serves_several_feed_runs(apple_source):
    ingest_task.call()
    ingest_task.call()

    assert DBTaskResult.objects.filter(task_path=PROCESS_TASK_PATH).count() == 1


# The worker closes database connections between tasks, as in production, so this test
# commits for real instead of running inside one rolled-back transaction.
@pytest.mark.django_db(transaction=True)
def test_the_worker_runs_the_processing_pass_after_the_feeds_task(apple_source, http):
    call_command("ingest", "--enqueue", stdout=io.StringIO())

    call_command("db_worker", "--batch", "--no-startup-delay", "--no-reload", stdout=io.StringIO())

    runs = {task.task_path: task for task in DBTaskResult.objects.all()}
    assert set(runs) == {INGEST_TASK_PATH, PROCESS_TASK_PATH}
    assert {task.status for task in runs.values()} == {"SUCCESSFUL"}
    assert runs[PROCESS_TASK_PATH].started_at >= runs[INGEST_TASK_PATH].finished_at
    entry = Entry.objects.get()
    assert entry.story_id is not None
    assert EntryEmbedding.objects.filter(entry=entry).exists()
    # /metrics reports the run's feed counts and the processing pass's counts together.
    text = scrape(http)
    assert sample(text, "news_ingest_last_success_entries", result="new") == 1
    assert sample(text, "news_ingest_last_success_entries_embedded") == 1
    assert sample(text, "news_ingest_last_success_stories", result="created") == 1
