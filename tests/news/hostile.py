"""Hostile feeds and what every surface must still be after them: feed documents served by a
local HTTP server, the real `ingest`, and the checks that each public surface answers 200 with
valid output (RSS parses as XML, front matter as YAML, no `<script` in markup, every URL an
absolute http(s) URI). Used by the hostile-input tests of articles, podcasts and MCP."""

import re
import xml.etree.ElementTree as ET

import yaml
from django.core.management import call_command
from django.test import Client

from news_site.news.models import Entry
from tests.support.api_walk import StrictWalk

GOOD_TITLE = "Apple släpper en ny iPhone"
# An absolute http(s) URI of RFC 3986 characters only (what /api/v1 declares as format: uri).
_URI = re.compile(
    r"^https?://[A-Za-z0-9\-._~%!$&'()*+,;=:@\[\]]+(/[A-Za-z0-9\-._~%!$&'()*+,;=:@/?#\[\]]*)?$"
)
# A link destination: `](` not escaped (an escaped `\]` is literal text in CommonMark).
_MD_LINK = re.compile(r"(?<!\\)\]\(([^)\s]*)\)")
_URL_KEYS = re.compile(r"(^|_)(url|link|image|page|audio|transcript|canonical|href)$")


def item(title: str, link: str, description: str = "Apple visar en ny iPhone.", extra: str = ""):
    return (
        f'<item><guid isPermaLink="false">{link or title}</guid><title>{title}</title>'
        + (f"<link>{link}</link>" if link else "")
        + f"<description>{description}</description>{extra}</item>"
    )


def rss(items: list[str], *, channel_extra: str = "") -> bytes:
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd" '
        'xmlns:podcast="https://podcastindex.org/namespace/1.0">'
        "<channel><title>Källan</title><link>https://source.example/</link>"
        f"{channel_extra}{''.join(items)}</channel></rss>"
    ).encode()


def good(n: str) -> str:
    return item(f"{GOOD_TITLE} {n}", f"https://good.example/{n}")


def serve(server, path: str, body: bytes, headers: dict[str, str] | None = None) -> str:
    server.respond(
        path, body=body, headers={"Content-Type": "application/rss+xml", **(headers or {})}
    )
    return server.url(path)


def ingest(capsys) -> str:
    """The real command; returns its summary line (an exception here fails the test)."""
    call_command("ingest", "--fetch-only")
    return capsys.readouterr().out


def assert_surfaces_valid() -> None:
    client = Client()
    ids = list(Entry.objects.filter(platform_relevant=True).values_list("pk", flat=True))
    assert ids, "no relevant entry to show"
    paths = ["/entries.json", "/api/v1/entries", "/index.md", "/llms.txt", "/entries.rss"]
    for pk in ids:
        paths += [f"/entries/{pk}.json", f"/api/v1/entries/{pk}", f"/entries/{pk}.md"]
    for path in paths:
        response = client.get(path)
        assert response.status_code == 200, (path, response.content[:300])
        text = response.content.decode()
        if path.endswith(".rss"):
            assert_rss_valid(text)
        elif path.endswith((".md", ".txt")):
            assert_markdown_valid(text)
        else:
            assert_json_urls(response.json())
    # And every read of the API, strictly as its OpenAPI document says.
    StrictWalk(client).every_read()


def assert_rss_valid(text: str) -> None:
    # Our own response, parsed to prove it is XML (raises otherwise).
    root = ET.fromstring(text.encode())  # noqa: S314
    for item in root.iter("item"):
        assert _URI.match(item.findtext("link") or ""), item.findtext("link")
        assert "<script" not in (item.findtext("description") or "").lower()
        for enclosure in item.iter("enclosure"):
            assert _URI.match(enclosure.get("url", "")), enclosure.get("url")


def assert_markdown_valid(text: str) -> None:
    body = text
    if text.startswith("---\n"):
        front, body = text[4:].split("\n---\n", 1)
        meta = yaml.safe_load(front)  # raises on invalid YAML
        assert_json_urls(meta)
    assert "<script" not in body.lower() and "<img" not in body.lower(), body[:400]
    for destination in _MD_LINK.findall(body):
        assert _URI.match(destination), destination


def assert_json_urls(value: object, key: str = "") -> None:
    if isinstance(value, dict):
        for name, item in value.items():
            assert_json_urls(item, str(name))
    elif isinstance(value, list):
        for item in value:
            assert_json_urls(item, key)
    elif isinstance(value, str) and value and _URL_KEYS.search(key):
        assert _URI.match(value), (key, value)
