"""The canary: a sentence that exists only in an article's full text appears on no surface.

The full text is read while summarising (the model gets it) and is never stored or shown.
Surfaces checked here: legacy JSON, markdown, the HTML pages, /llms.txt, RSS and /api/v1; the
tool server is checked in tests/news/mcp/test_canary.py.
"""

import json

import httpx
import pytest

from news_site.ingest.services import ingest_run
from news_site.news.feeds import feed_add
from news_site.news.models import Entry, SummaryState, Tag
from news_site.news.summarise import ChatModel
from tests.news.conftest import FakeModel

pytestmark = pytest.mark.django_db

CANARY = "Kanariefågeln sjunger bara i originaltexten 7f3a."
SURFACES = [
    "/entries.json",
    "/entries/popular.json",
    "/entries/{id}.json",
    "/feeds/{feed}.json",
    "/tags/{tag}.json",
    "/entries/{id}.md",
    "/entries/{id}",
    "/index.md",
    "/llms.txt",
    "/entries.rss",
    "/",
    "/api/v1/entries",
    "/api/v1/entries/popular",
    "/api/v1/entries/{id}",
    "/api/v1/entries/search?q=iPhone",
    "/api/v1/feeds/{feed}/entries",
    "/api/v1/stories",
]


def _page(canary: str) -> bytes:
    return (
        "<html><body><article><p>Apple presenterar en ny iPhone.</p>"
        f"<p>{canary}</p></article></body></html>"
    ).encode()


def _assert_nowhere(client: httpx.Client, entry: Entry) -> None:
    tag = Tag.objects.filter(entries=entry).first()
    values = {"id": entry.pk, "feed": entry.feed_id, "tag": tag.pk if tag else 0}
    for template in SURFACES:
        path = template.format(**values)
        response = client.get(path, headers={"Accept": "text/markdown, text/html;q=0.5, */*"})
        if "{tag}" not in template or tag:
            assert response.status_code == 200, path
        assert "Kanariefågeln" not in response.text, path
        assert "7f3a" not in response.text, path
    stored = Entry.objects.filter(pk=entry.pk).values().get()
    assert not any("7f3a" in str(value) for value in stored.values())


def test_the_full_text_read_for_the_model_is_on_no_surface(
    http,
    server,
    private_fetching,
    fake_model,
    rss,
):
    server.respond("/a/1", body=_page(CANARY), headers={"Content-Type": "text/html"})
    server.respond(
        "/feed.xml",
        body=rss(
            [
                {
                    "guid": "1",
                    "link": server.url("/a/1"),
                    "title": "Apple presenterar en ny iPhone",
                    "description": "Apple presenterar en ny iPhone.",
                }
            ]
        ),
    )
    feed_add(url=server.url("/feed.xml"), language="sv")
    model = ChatModel.from_settings()
    ingest_run(model=model)
    model.close()

    # The model really was given the full text...
    assert CANARY in fake_model.requests[0]["messages"][1]["content"]
    # ...and nothing shows it.
    _assert_nowhere(http, Entry.objects.get())


def test_full_text_in_a_feeds_content_encoded_is_on_no_surface(
    http,
    server,
    private_fetching,
):
    body = f"""<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/">
<channel><title>Källan</title><link>https://source.example/</link>
<item><guid>1</guid><link>https://source.example/a/1</link><title>Apple visar iPhone</title>
<description>Apple visar en ny iPhone.</description>
<content:encoded><![CDATA[<p>Apple visar en ny iPhone.</p><p>{CANARY}</p>]]></content:encoded>
</item></channel></rss>""".encode()
    server.respond("/feed.xml", body=body)
    feed_add(url=server.url("/feed.xml"), language="sv")
    ingest_run()

    _assert_nowhere(http, Entry.objects.get())


ARTICLE = (
    "Apple presenterar en ny iPhone med större skärm, bättre kamera och längre batteritid "
    f"när bolaget håller sitt höstevenemang i Cupertino på tisdag. {CANARY} Enligt bolaget "
    "kommer telefonen att finnas i butik om två veckor, och priset är detsamma som förra året. "
    "Analytiker väntar sig att försäljningen ökar något under det första kvartalet."
)


@pytest.mark.parametrize("echo_chars", [480, None], ids=["short-echo", "whole-article"])
def test_a_model_that_echoes_the_article_is_refused_and_on_no_surface(
    http,
    server,
    private_fetching,
    fake_model,
    rss,
    echo_chars,
):
    """A model that copies the article (all of it, or a short cut under the length cap) gives
    no summary: the guard refuses it, the refusal is recorded on the entry, and the entry keeps
    its offline cut."""

    def echo(request) -> None:
        prompt = json.loads(server.requests_to("/v1/chat/completions")[-1][3])["messages"][1][
            "content"
        ]
        article = prompt.split("Artikel:\n", 1)[1][:echo_chars]
        body = json.dumps(
            FakeModel.completion(
                {"summary_sv": article, "summary_original": article, "platform_relevant": True}
            )
        ).encode()
        request.send_response(200)
        request.send_header("Content-Type", "application/json")
        request.send_header("Content-Length", str(len(body)))
        request.end_headers()
        request.wfile.write(body)

    server.route("/v1/chat/completions", echo)
    server.respond(
        "/a/1",
        body=f"<html><body><article><p>{ARTICLE}</p></article></body></html>".encode(),
        headers={"Content-Type": "text/html"},
    )
    server.respond(
        "/feed.xml",
        body=rss(
            [
                {
                    "guid": "1",
                    "link": server.url("/a/1"),
                    "title": "Apple presenterar en ny iPhone",
                    "description": "Apple presenterar en ny iPhone.",
                }
            ]
        ),
    )
    feed_add(url=server.url("/feed.xml"), language="sv")
    model = ChatModel.from_settings()
    report = ingest_run(model=model)
    model.close()

    assert report.summaries_failed == 1 and report.entries_summarised == 0
    entry = Entry.objects.get()
    assert entry.summary_state == SummaryState.EXTRACTED
    assert "copies" in entry.summary_error or "characters" in entry.summary_error
    _assert_nowhere(http, entry)
