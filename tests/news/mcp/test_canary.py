"""The canary on the tool server: a sentence only in an article's full text is in no answer."""

import json

import pytest

from news_site.ingest.services import ingest_run
from news_site.news.feeds import feed_add
from news_site.news.models import Entry
from news_site.news.summarise import ChatModel
from tests.news.evasion import (
    ARTICLE,
    EVASIONS,
    TEASER,
    TITLE,
    copied_runs,
    serve_evasive_model,
    strings_in,
)

pytestmark = pytest.mark.django_db(transaction=True)

CANARY = "Kanariefågeln sjunger bara i originaltexten 9c1e."


def test_the_full_text_read_for_the_model_is_in_no_tool_answer(
    mcp_server, server, private_fetching, fake_model, rss
):
    server.respond(
        "/a/1",
        body=f"<html><body><p>Apple visar en ny iPhone.</p><p>{CANARY}</p></body></html>".encode(),
        headers={"Content-Type": "text/html"},
    )
    server.respond(
        "/feed.xml",
        body=rss(
            [
                {
                    "guid": "1",
                    "link": server.url("/a/1"),
                    "title": "Apple visar iPhone",
                    "description": "Apple visar en ny iPhone.",
                }
            ]
        ),
    )
    feed_add(url=server.url("/feed.xml"), language="sv")
    model = ChatModel.from_settings()
    ingest_run(model=model)
    model.close()
    entry = Entry.objects.get()
    assert CANARY in fake_model.requests[0]["messages"][1]["content"]

    calls = [
        ("latest_news", {}),
        ("popular_news", {}),
        ("get_entry", {"entry_id": entry.pk}),
        ("search_news", {"query": "iPhone"}),
        ("latest_stories", {}),
    ]
    for name, arguments in calls:
        result = mcp_server.call(name, arguments)
        answer = json.dumps(result.model_dump(mode="json"), ensure_ascii=False)
        assert "iPhone" in answer or name == "latest_stories", name
        assert "Kanariefågeln" not in answer, name
        assert "9c1e" not in answer, name


@pytest.mark.parametrize("evasion", EVASIONS)
def test_no_tool_answer_shows_a_run_of_eight_article_words_whatever_the_model_tries(
    mcp_server, server, private_fetching, fake_model, rss, evasion
):
    """Models that dodge the verbatim guard (tests/news/evasion.py): 0 runs of 8 article words
    in any tool answer, structured content included."""
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
    ingest_run(model=model)
    model.close()
    entry = Entry.objects.get()

    for name, arguments in [
        ("latest_news", {}),
        ("popular_news", {}),
        ("get_entry", {"entry_id": entry.pk}),
        ("search_news", {"query": "telefon"}),
        ("latest_stories", {}),
    ]:
        result = mcp_server.call(name, arguments)
        text = " ".join(part.text for part in result.content)
        structured = " ".join(strings_in(result.structured_content or {}))
        assert copied_runs(text) == set() and copied_runs(structured) == set(), (evasion, name)
