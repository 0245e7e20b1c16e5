"""Summaries from an OpenAI-compatible model served on loopback, and the offline fallback."""

import pytest

from news_site.ingest.services import ingest_run
from news_site.news.models import Entry, SummaryState
from news_site.news.summaries import entries_resummarise_request
from news_site.news.summarise import ChatModel

pytestmark = pytest.mark.django_db

ARTICLE_PAGE = b"""<html><head><meta property="og:image" content="https://img.example/og.jpg">
</head><body><nav>Meny</nav><article><p>Apple presenterar en ny iPhone.</p>
<p>Hela texten har fler detaljer.</p></article></body></html>"""


@pytest.fixture
def source(server, private_fetching, make_feed, rss):
    server.respond("/article/1", body=ARTICLE_PAGE, headers={"Content-Type": "text/html"})
    server.respond(
        "/feed.xml",
        body=rss(
            [
                {
                    "guid": "1",
                    "link": server.url("/article/1"),
                    "title": "Apple unveils a new iPhone",
                    "description": "Apple unveiled a new iPhone today. It is faster.",
                }
            ]
        ),
    )
    return make_feed(url=server.url("/feed.xml"), language="en", title="MacSource")


def _run() -> object:
    model = ChatModel.from_settings()
    try:
        return ingest_run(model=model)
    finally:
        if model is not None:
            model.close()


def test_without_a_model_the_entry_has_an_extract_and_says_it_is_not_translated(source, settings):
    settings.NEWS_LLM_BASE_URL = ""

    report = _run()

    entry = Entry.objects.get()
    assert report.entries_summarised == 0
    assert entry.summary_state == SummaryState.EXTRACTED
    assert entry.summary_original == "Apple unveiled a new iPhone today. It is faster."
    assert entry.summary_translated == ""
    assert not entry.is_translated


def test_the_model_writes_the_swedish_summary_tags_and_relevance(source, fake_model):
    report = _run()

    entry = Entry.objects.get()
    assert report.entries_summarised == 1
    assert entry.summary_state == SummaryState.TRANSLATED
    assert entry.summary_translated.startswith("Sammanfattning på svenska")
    assert {tag.name for tag in entry.tags.all()} == {"iPhone", "Test"}
    # The article page was read: its og:image is used and its text went to the model.
    assert entry.image_url == "https://img.example/og.jpg"
    request = fake_model.requests[0]
    assert request["model"] == "test-model"
    assert "Hela texten har fler detaljer." in request["messages"][1]["content"]
    assert "Meny" not in request["messages"][1]["content"]
    _method, _path, headers, _body = fake_model.server.requests_to("/v1/chat/completions")[0]
    assert headers["Authorization"] == "Bearer test-key"


def test_an_entry_is_summarised_once_unless_an_editor_asks_again(source, fake_model):
    _run()
    _run()
    assert len(fake_model.requests) == 1

    entries_resummarise_request(entry_ids=[Entry.objects.get().pk])
    _run()

    assert len(fake_model.requests) == 2


def test_an_editors_summary_is_not_overwritten_by_later_runs(source, fake_model):
    _run()
    Entry.objects.update(summary_state=SummaryState.EDITED, summary_fingerprint="changed")

    _run()

    assert len(fake_model.requests) == 1


def test_server_errors_are_retried_with_backoff(source, fake_model):
    fake_model.queue(503, {"error": "busy"}, {"Retry-After": "0"})
    fake_model.queue(500, {"error": "oops"})

    report = _run()

    assert report.entries_summarised == 1
    assert len(fake_model.requests) == 3


def test_an_unusable_answer_is_recorded_and_the_extract_stays(source, fake_model):
    for _ in range(3):
        fake_model.queue(200, fake_model.completion("Jag vet inte."))

    report = _run()

    entry = Entry.objects.get()
    assert report.summaries_failed == 1
    assert entry.summary_state == SummaryState.EXTRACTED
    assert entry.summary_attempts == 1
    assert "JSON" in entry.summary_error
    assert entry.summary_original.startswith("Apple unveiled")


def test_the_run_stops_calling_the_model_when_its_budget_is_spent(
    server, private_fetching, make_feed, rss, fake_model, settings
):
    settings.NEWS_LLM_MAX_CALLS_PER_RUN = 2
    items = [
        {"guid": str(n), "link": f"https://mac.example/{n}", "title": f"Apple nyhet {n}"}
        for n in range(5)
    ]
    server.respond("/feed.xml", body=rss(items))
    make_feed(url=server.url("/feed.xml"))
    settings.NEWS_FETCH_ARTICLE_PAGES = False

    report = _run()

    assert report.entries_summarised == 2
    assert len(fake_model.requests) == 2
    assert Entry.objects.filter(summary_state=SummaryState.EXTRACTED).count() == 3
