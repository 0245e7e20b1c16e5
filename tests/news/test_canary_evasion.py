"""The canary against models that dodge the verbatim guard (issue 21): soft hyphens and
zero-width spaces inside words, Cyrillic look-alike letters, runs of 11 words, the article
split over both summaries, and article text carried in tags. On every surface a reader sees
0 runs of 8 or more words of the article; the answers that copy are refused and recorded on
the entry, which keeps its offline cut. The tool server: tests/news/mcp/test_canary.py.
"""

import pytest

from news_site.ingest.services import ingest_run
from news_site.news.feeds import feed_add
from news_site.news.models import Entry, SummaryState, Tag
from news_site.news.summarise import ChatModel
from tests.news.evasion import (
    ARTICLE,
    EVASIONS,
    HARMLESS,
    TEASER,
    TITLE,
    copied_runs,
    serve_evasive_model,
    surface_text,
)
from tests.news.test_canary import SURFACES

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("evasion", EVASIONS)
def test_no_surface_shows_a_run_of_eight_article_words_whatever_the_model_tries(
    http,
    server,
    private_fetching,
    fake_model,
    rss,
    evasion,
):
    serve_evasive_model(server, evasion)
    server.respond(
        "/a/1",
        body=f"<html><body><article><p>{ARTICLE}</p></article></body></html>".encode(),
        headers={"Content-Type": "text/html"},
    )
    server.respond(
        "/feed.xml",
        body=rss(
            [{"guid": "1", "link": server.url("/a/1"), "title": TITLE, "description": TEASER}]
        ),
    )
    feed_add(url=server.url("/feed.xml"), language="sv")
    model = ChatModel.from_settings()
    report = ingest_run(model=model)
    model.close()

    entry = Entry.objects.get()
    if evasion == "sentence-tag":
        # A sentence is not a topic word: the tag is left out, the summary itself is fine.
        assert report.entries_summarised == 1
        assert entry.summary_translated == HARMLESS
        assert not Tag.objects.filter(entries=entry).exclude(name="iPhone").exists()
    else:
        assert report.summaries_failed == 1 and report.entries_summarised == 0
        assert entry.summary_state == SummaryState.EXTRACTED
        assert "copies" in entry.summary_error or "characters" in entry.summary_error
    tag = Tag.objects.filter(entries=entry).first()
    values = {"id": entry.pk, "feed": entry.feed_id, "tag": tag.pk if tag else 0}
    for template in SURFACES:
        if "{tag}" in template and not tag:
            continue
        path = template.format(**values)
        response = http.get(path, headers={"Accept": "text/markdown, text/html;q=0.5, */*"})
        assert response.status_code == 200, path
        assert copied_runs(surface_text(response)) == set(), (evasion, path)
    stored = " ".join(str(v) for v in Entry.objects.filter(pk=entry.pk).values().get().values())
    tags = " ".join(Tag.objects.values_list("name", flat=True))
    assert copied_runs(stored) == set() and copied_runs(tags) == set()


@pytest.mark.parametrize("evasion", EVASIONS)
def test_the_measure_sees_what_each_evasive_model_copies(evasion):
    """The canary's measure is not blind to the evasion it checks: the answer as the model
    gives it holds runs of 8 article words for a reader."""
    answer = EVASIONS[evasion]()
    fields = [answer.get("summary_sv", ""), answer.get("summary_original", "")]
    assert copied_runs(" ".join([*fields, *answer.get("tags", [])]))
