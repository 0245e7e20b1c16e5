"""The model API stops answering in the middle of an ingest run (a loopback stand-in that
answers the first summaries and then hangs past NEWS_LLM_TIMEOUT_SECONDS): the run ends
within one entry's timeouts, every entry is stored with its offline summary, and the next run
with a working model writes the missing summaries."""

import io
import time
from http.server import BaseHTTPRequestHandler

import pytest
from django.core.management import call_command

from news_site.news.models import Entry, SummaryState

pytestmark = pytest.mark.django_db

ITEMS = 20
ANSWERED = 2
TIMEOUT = 1
ATTEMPTS = 2


@pytest.fixture
def source(server, private_fetching, make_feed, rss, fake_model, settings):
    settings.NEWS_LLM_TIMEOUT_SECONDS = TIMEOUT
    settings.NEWS_LLM_MAX_ATTEMPTS = ATTEMPTS
    settings.NEWS_FETCH_ARTICLE_PAGES = False
    settings.NEWS_EMBEDDING_MODEL = "off"  # loading the embedding model is not under test
    items = [
        {
            "guid": str(n),
            "link": f"https://mac.example/{n}",
            "title": f"Apple släpper iPhone-nyhet {n}",
            "description": f"Apple meddelade i dag nyhet nummer {n}. Mer följer.",
        }
        for n in range(ITEMS)
    ]
    server.respond("/feed.xml", body=rss(items))
    make_feed(url=server.url("/feed.xml"), language="sv", title="Källan")
    return fake_model


def hang_after(model, answered: int):
    """Answer `answered` requests as the fake model does, then hang without a byte."""
    normal = model._answer
    count = {"n": 0}

    def route(request: BaseHTTPRequestHandler) -> None:
        count["n"] += 1
        if count["n"] <= answered:
            normal(request)
        else:
            model.server.stopping.wait(TIMEOUT * 5)

    model.server.route("/v1/chat/completions", route)


def ingest() -> tuple[str, float]:
    out = io.StringIO()
    started = time.monotonic()
    call_command("ingest", stdout=out)
    return out.getvalue(), time.monotonic() - started


def test_a_hanging_model_ends_the_run_in_bounded_time_and_loses_nothing(source):
    hang_after(source, ANSWERED)

    line, seconds = ingest()

    # One entry's attempts time out, then the run stops calling the model; a handful of
    # seconds, not (entries x attempts x timeout).
    # Unbounded would be (ITEMS - ANSWERED) x ATTEMPTS x TIMEOUT = 36 s; the slack over one
    # entry's attempts is for a loaded machine.
    assert seconds < ATTEMPTS * TIMEOUT + 15, seconds
    assert len(source.requests) == ANSWERED + ATTEMPTS
    assert f"{ITEMS} new, {ANSWERED} summarised, 1 summaries failed" in line
    entries = list(Entry.objects.order_by("pk"))
    assert len(entries) == ITEMS
    waiting = [e for e in entries if e.summary_state == SummaryState.EXTRACTED]
    assert len(waiting) == ITEMS - ANSWERED
    for entry in waiting:
        # The offline extract is served meanwhile; no failed attempt is held against it.
        assert entry.summary_original.startswith("Apple meddelade")
        assert entry.summary_attempts == 0
        assert entry.summary_lease_until is None
    assert sum("ReadTimeout" in e.summary_error for e in waiting) == 1
    print(f"run with a hanging model: {seconds:.1f} s")

    source.server.route("/v1/chat/completions", source._answer)  # the model is back
    line, seconds = ingest()

    assert f"{ITEMS - ANSWERED} summarised, 0 summaries failed" in line
    assert set(Entry.objects.values_list("summary_state", flat=True)) == {SummaryState.TRANSLATED}
    assert set(Entry.objects.values_list("summary_error", flat=True)) == {""}
