"""Every MCP tool's answer after hostile feeds (articles and a podcast) went through the real
`ingest`: no `<script`, no `javascript:`/`data:` URL, every URL an absolute http(s) URI, and
each markdown document's front matter valid YAML. The tools are listed from the server itself,
so a new tool is covered without editing this test."""

import json
import re

import pytest
from django.core.management import call_command

from news_site.news.models import Entry, GuidePageType, ProductGuide, Story
from news_site.podcasts.models import PodcastEpisode
from tests.news.hostile import (
    assert_json_urls,
    assert_markdown_valid,
    good,
    item,
    rss,
    serve,
)
from tests.support.news_factories import GuideFactory

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.every_backend]

_SCRIPT = "&amp;lt;script&amp;gt;alert(1)&amp;lt;/script&amp;gt;"
# Raw markup anywhere in an answer's text.
_MARKUP = re.compile(r"<script|<img", re.IGNORECASE)
# A javascript:/data: URL where markdown would make it live: a link or image destination, an
# autolink. (Escaped feed text may still read "javascript:" as words: `\\[x\\](javascript:…)`
# is not a link, and neither is a YAML string in front matter.)
_LIVE_BAD_URL = re.compile(r"(?<!\\)\]\(\s*(?:javascript|data):|<(?:javascript|data):", re.I)


def _hostile_articles(server) -> bytes:
    return rss(
        [
            item(
                f"# Apple iPhone {_SCRIPT} [x](javascript:alert(1)) ![i](data:text/html,x)",
                "https://h.example/m",
                f"Apple iPhone {_SCRIPT} [klicka](javascript:alert(1)) "
                "&lt;img src=x onerror=alert(1)&gt;",
                extra='<enclosure url="javascript:alert(1)" type="image/jpeg" length="0"/>',
            ),
            item(
                "Apple iPhone bild &#127;&#133;&#65534;",
                "/artiklar/relativ",
                extra='<enclosure url="data:image/png;base64,AAAA" type="image/png" length="0"/>',
            ),
            good("mcp"),
        ]
    )


def _hostile_podcast(server) -> bytes:
    server.respond(
        "/chapters.json",
        body=(
            b'{"chapters": [{"startTime": 0,'
            b' "title": "<script>alert(1)</script> [x](javascript:y)",'
            b' "url": "javascript:alert(1)"}, {"startTime": 30, "title": "Data",'
            b' "url": "data:text/html,x"}, {"startTime": 60, "title": "Bra",'
            b' "url": "https://podd.example/kapitel"}]}'
        ),
        headers={"Content-Type": "application/json"},
    )
    return rss(
        [
            f'<item><guid isPermaLink="false">ep-hostile</guid>'
            f"<title># Avsnitt {_SCRIPT} [x](javascript:alert(1)) &#127;&#65534;</title>"
            "<link>https://podd.example/avsnitt</link>"
            f"<description>Om iPhone {_SCRIPT} [y](javascript:z) ![b](data:image/png,x)"
            "</description>"
            '<enclosure url="https://podd.example/1.mp3" type="audio/mpeg" length="1"/>'
            "<itunes:duration>1e400</itunes:duration>"
            f'<podcast:chapters url="{server.url("/chapters.json")}" '
            'type="application/json+chapters"/></item>'
        ]
    )


def _arguments(name: str, schema: dict) -> dict:
    """A tool's required arguments, pointing at the hostile rows, and the largest page."""
    known = {
        "entry_id": Entry.objects.get(url="https://h.example/m").pk,
        "story_id": Story.objects.filter(entries__url="https://h.example/m").get().pk,
        "episode_id": "ep-hostile",
        "slug": ProductGuide.objects.get().slug,
        "query": "iPhone",
    }
    required = set(schema.get("required", ()))
    assert required <= set(known), (name, required - set(known))
    arguments = {key: known[key] for key in required}
    if "limit" in schema.get("properties", {}):
        arguments["limit"] = 50
    return arguments


def _assert_answer_safe(name: str, text: str, structured: object) -> None:
    found = _MARKUP.search(text)
    assert not found, (name, text[max(0, found.start() - 300) : found.end() + 100])
    # List answers join one markdown document per item; each front matter must parse.
    for document in re.split(r"\n(?=---\n\w+: )", text):
        assert_markdown_valid(document)
        body = document.split("\n---\n", 1)[-1] if document.startswith("---\n") else document
        assert not _LIVE_BAD_URL.search(body), (name, body[:500])
    # Structured content is JSON: string fields are data (a title reading `<script>` is that
    # text), and every URL field must be an absolute http(s) URI.
    assert_json_urls(structured)


def test_every_mcp_tool_answers_safely_after_hostile_feeds(
    server,
    private_fetching,
    capsys,
    mcp_server,
):
    call_command(
        "add_feed", serve(server, "/hostile.xml", _hostile_articles(server)), "--no-discover"
    )
    call_command("add_feed", serve(server, "/podd.xml", _hostile_podcast(server)), "--podcast")
    GuideFactory(
        slug="iphone", title="iPhone", page_type=GuidePageType.PRODUCT_HUB, body="Om iPhone."
    )
    call_command("ingest")
    capsys.readouterr()
    assert PodcastEpisode.objects.filter(guid="ep-hostile").exists()
    assert Entry.objects.filter(url="https://h.example/m", story__isnull=False).exists()

    tools = mcp_server.session(lambda client: client.list_tools()).tools
    assert len(tools) >= 12
    for tool in tools:
        result = mcp_server.call(tool.name, _arguments(tool.name, tool.input_schema))
        # The markdown first; the last block is the structured content serialised as JSON,
        # whose strings are data (checked with the structured content below).
        text = result.content[0].text
        assert not result.is_error, (tool.name, text)
        assert json.loads(result.content[-1].text) == result.structured_content
        _assert_answer_safe(tool.name, text, result.structured_content)


def test_mcp_tool_answers_are_safe(mcp_server, make_feed, make_entry):
    """The MCP tools' markdown and structured content, for rows as hostile as storage allows."""
    feed = make_feed(title="Evil <script>alert(1)</script> [x](javascript:alert(1))")
    entry = make_entry(
        feed,
        title="Apple \x7f\x85\ufffe <script>alert(1)</script> [x](javascript:alert(1))",
        url='https://h.example/a b"c',
        image_url="data:image/png;base64,AAAA",
        summary_translated="Apple <img src=x onerror=alert(1)> [y](javascript:z)",
        platform_relevant=True,
    )
    for name, arguments in (("latest_news", {"limit": 10}), ("get_entry", {"entry_id": entry.pk})):
        result = mcp_server.call(name, arguments)
        assert not result.is_error, name
        # The markdown; the last block is the structured content as JSON, checked below.
        text = result.content[0].text
        assert json.loads(result.content[-1].text) == result.structured_content
        # latest_news joins one markdown document per entry.
        for document in re.split(r"\n(?=---\nid: )", text):
            assert_markdown_valid(document)
        assert_json_urls(result.structured_content)
