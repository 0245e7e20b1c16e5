"""Hostile feeds through the real commands: every trigger of a broken ingest or a broken surface
(issue #11), as a table of publishers' documents and a Hypothesis generator of hostile item
values. Each case runs `add_feed` and `ingest` against local HTTP servers beside a well-behaved
source and then checks that

- the command exits as it should (0: failures are recorded on their unit, not raised),
- the other units were stored (the good source's item, the good item beside the bad one),
- every public surface answers 200 with valid output: RSS parses as XML, front matter as YAML,
  no `<script` in markup, every URL an absolute http(s) URI, MCP tool answers likewise, and
  every read of /api/v1 and the legacy JSON validates strictly against the OpenAPI document.

Runs on SQLite and, with NEWS_DATABASE_URL set, on PostgreSQL (NUL and column lengths are
only enforced there).
"""

import json
import re
import xml.etree.ElementTree as ET
from datetime import timedelta

import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from news_site.news.models import Entry, Feed
from news_site.podcasts.models import PodcastEpisode
from tests.support.api_walk import StrictWalk

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.every_backend]

GOOD_TITLE = "Apple släpper en ny iPhone"
# An absolute http(s) URI of RFC 3986 characters only (what /api/v1 declares as format: uri).
_URI = re.compile(
    r"^https?://[A-Za-z0-9\-._~%!$&'()*+,;=:@\[\]]+(/[A-Za-z0-9\-._~%!$&'()*+,;=:@/?#\[\]]*)?$"
)
# A link destination: `](` not escaped (an escaped `\]` is literal text in CommonMark).
_MD_LINK = re.compile(r"(?<!\\)\]\(([^)\s]*)\)")
_URL_KEYS = re.compile(r"(^|_)(url|link|image|page|audio|transcript|canonical|href)$")


def _item(title: str, link: str, description: str = "Apple visar en ny iPhone.", extra: str = ""):
    return (
        f'<item><guid isPermaLink="false">{link or title}</guid><title>{title}</title>'
        + (f"<link>{link}</link>" if link else "")
        + f"<description>{description}</description>{extra}</item>"
    )


def _rss(items: list[str], *, channel_extra: str = "") -> bytes:
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<rss version="2.0" xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd" '
        'xmlns:podcast="https://podcastindex.org/namespace/1.0">'
        "<channel><title>Källan</title><link>https://source.example/</link>"
        f"{channel_extra}{''.join(items)}</channel></rss>"
    ).encode()


def _atom_item(title: str, link: str, updated: str) -> bytes:
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom">'
        "<title>Atomkällan</title>"
        f"<entry><id>urn:1</id><title>{title}</title><link href='{link}'/>"
        f"<updated>{updated}</updated><summary>Apple visar en ny iPhone.</summary></entry>"
        f"<entry><id>urn:2</id><title>{GOOD_TITLE} igen</title>"
        "<link href='https://good.example/atom-2'/>"
        "<updated>2026-01-01T00:00:00Z</updated><summary>Apple visar iPhone.</summary></entry>"
        "</feed>"
    ).encode()


def _good(n: str) -> str:
    return _item(f"{GOOD_TITLE} {n}", f"https://good.example/{n}")


# (case id, feed body (bytes or a function of the server), extra routes, titles that must be stored)
ARTICLE_CASES = [
    (
        "year-0000",
        lambda s: _atom_item("Apple år noll", "https://h.example/0", "0000-01-01T00:00:00Z"),
    ),
    (
        "year-10000",
        lambda s: _atom_item("Apple år 10000", "https://h.example/9", "9999-12-31T23:59:59-12:00"),
    ),
    ("nul-title", lambda s: _rss([_item("Apple &#0;NUL", "https://h.example/nul"), _good("a")])),
    (
        "control-characters",
        lambda s: _rss(
            [_item("Apple &#127;&#133;&#65534;&#1;kontroll", "https://h.example/c"), _good("b")]
        ),
    ),
    (
        "link-too-long-once-normalised",
        lambda s: _rss([_item("Apple lång", "https://h.example/" + "a " * 995), _good("c")]),
    ),
    (
        "million-comment-openers",
        lambda s: _rss(
            [_item("Apple kommentar", "https://h.example/k", "&lt;!--" * 250_000), _good("d")]
        ),
    ),
    (
        "unterminated-anchors",
        lambda s: _rss(
            [
                _item("Apple ankare", "https://h.example/u", "&lt;a href=&quot;" * 100_000),
                _good("e"),
            ]
        ),
    ),
    (
        "markup-in-text",
        lambda s: _rss(
            [
                _item(
                    "# Apple &amp;lt;script&amp;gt;alert(1)&amp;lt;/script&amp;gt; "
                    "[x](javascript:alert(1)) ![i](data:text/html,x)",
                    "https://h.example/m",
                    "Apple &amp;lt;script&amp;gt;x&amp;lt;/script&amp;gt; "
                    "[klicka](javascript:alert(1))",
                ),
                _good("f"),
            ]
        ),
    ),
    (
        "hostile-image-urls",
        lambda s: _rss(
            [
                _item(
                    "Apple bild js",
                    "https://h.example/i1",
                    extra='<enclosure url="javascript:alert(1)" type="image/jpeg" length="0"/>',
                ),
                _item(
                    "Apple bild data",
                    "https://h.example/i2",
                    extra='<enclosure url="data:image/png;base64,AAAA" type="image/png" '
                    'length="0"/>',
                ),
                _item(
                    "Apple bild relativ",
                    "https://h.example/i3",
                    extra='<enclosure url="/img/a b.jpg" type="image/jpeg" length="0"/>',
                ),
            ]
        ),
    ),
    (
        "relative-and-odd-links",
        lambda s: _rss(
            [
                _item("Apple relativ", "/artiklar/1"),
                _item("Apple mellanslag", 'https://h.example/a b"c'),
                _item("Apple javascript-länk", "javascript:alert(1)"),
                _item("Apple utan länk", ""),
                _good("g"),
            ]
        ),
    ),
    (
        "audio-duration-overflow-in-article-feed",
        lambda s: _rss(
            [
                _item(
                    "Apple ljud",
                    "https://h.example/ljud",
                    extra='<enclosure url="https://h.example/a.mp3" type="audio/mpeg" length="1"/>'
                    "<itunes:duration>1e400</itunes:duration>",
                ),
                _good("h"),
            ]
        ),
    ),
]


def _serve(server, path: str, body: bytes, headers: dict[str, str] | None = None) -> str:
    server.respond(
        path, body=body, headers={"Content-Type": "application/rss+xml", **(headers or {})}
    )
    return server.url(path)


def _ingest(capsys) -> str:
    """The real command; returns its summary line (an exception here fails the test)."""
    call_command("ingest", "--fetch-only")
    return capsys.readouterr().out


@pytest.mark.parametrize(("case", "body"), ARTICLE_CASES, ids=[c[0] for c in ARTICLE_CASES])
def test_a_hostile_article_feed_stops_nothing_and_breaks_no_surface(
    server, private_fetching, capsys, case, body
):
    call_command("add_feed", _serve(server, "/good.xml", _rss([_good("0")])))
    call_command(
        "add_feed",
        _serve(server, "/hostile.xml", body(server), {"Content-Location": "/moved/feed.xml"}),
    )
    line = _ingest(capsys)

    assert "2 fetched" in line, line
    assert Entry.objects.filter(title=f"{GOOD_TITLE} 0").exists()
    hostile = Feed.objects.get(url=server.url("/hostile.xml"))
    assert hostile.last_outcome == "ok", hostile.last_error
    # Every item the hostile document holds besides the bad one was stored too.
    assert Entry.objects.filter(feed=hostile).count() >= 1
    if case == "relative-and-odd-links":
        urls = set(Entry.objects.filter(feed=hostile).values_list("url", flat=True))
        # Resolved against Content-Location, itself relative to the feed's final URL.
        assert server.url("/artiklar/1") in urls
        assert "https://h.example/a%20b%22c" in urls
        assert "2 items skipped" in line and "2 items without a usable" in hostile.last_error
    if case == "link-too-long-once-normalised":
        assert "1 items without a usable http(s) link" in hostile.last_error
    if case == "year-0000":
        assert Entry.objects.get(title="Apple år noll").published_at is None
    _assert_surfaces_valid()


def test_stored_rows_from_before_cleaning_are_served_safely(make_feed, make_entry):
    """Escape at output: rows written before ingest cleaned them still give valid surfaces."""
    feed = make_feed(title="Evil <script>alert(1)</script> [x](javascript:alert(1))")
    make_entry(
        feed,
        title="Apple \x7f\x85\ufffe\x01 <script>alert(1)</script> [x](javascript:alert(1))",
        url='https://h.example/a b"c<d>',
        image_url="javascript:alert(1)",
        summary_translated="Apple \x0b<img src=x onerror=alert(1)> [y](data:text/html,z)",
        platform_relevant=True,
    )
    make_entry(feed, title="Apple gammal", published_at=timezone.now().replace(year=1))
    _assert_surfaces_valid()
    posted = {e["title"]: e["posted"] for e in Client().get("/entries.json").json()["entries"]}
    assert "1928" not in posted["Apple gammal"] and posted["Apple gammal"].endswith("1")


def test_hostile_podcast_feed_chapters_and_transcripts(server, private_fetching, capsys):
    chapters_nan = (
        b'{"chapters": [{"startTime": NaN, "title": "a"}, {"startTime": Infinity, "title": "b"},'
        b' {"startTime": 1e400, "title": "c"},'
        b' {"startTime": 60, "title": "OK <script>x</script>", "url": "javascript:alert(1)"}]}'
    )
    server.respond(
        "/chapters.json", body=chapters_nan, headers={"Content-Type": "application/json"}
    )
    utf16 = "Transkript på svenska\x00 med NUL".encode("utf-16")
    server.respond("/t16.txt", body=utf16, headers={"Content-Type": "text/plain"})
    server.respond("/t404.txt", status=404)

    def episode(n: int, duration: str, extra: str = "") -> str:
        return (
            f'<item><guid isPermaLink="false">ep-{n}</guid><title>Avsnitt {n} &#0;</title>'
            f"<link>https://podd.example/{n}</link><description>Om iPhone.</description>"
            f'<enclosure url="https://podd.example/{n}.mp3" type="audio/mpeg" length="1"/>'
            f"<itunes:duration>{duration}</itunes:duration>"
            f"<pubDate>Mon, 01 Jan 0001 00:00:00 +0100</pubDate>{extra}</item>"
        )

    body = _rss(
        [
            episode(
                1,
                "1e400",
                f'<podcast:chapters url="{server.url("/chapters.json")}" '
                'type="application/json+chapters"/>',
            ),
            episode(
                2,
                "99999999999999999999:00:00",
                f'<podcast:transcript url="{server.url("/t16.txt")}" type="text/plain"/>',
            ),
            episode(
                3, "NaN", f'<podcast:transcript url="{server.url("/t404.txt")}" type="text/plain"/>'
            ),
            episode(4, "01:02:03"),
        ]
    )
    call_command("add_feed", _serve(server, "/podd.xml", body), "--podcast")
    call_command("add_feed", _serve(server, "/good.xml", _rss([_good("0")])))
    for _run in range(7):
        call_command("ingest")
        Feed.objects.update(next_check_at=timezone.now() - timedelta(seconds=1), body_hash="")
    line = capsys.readouterr().out

    assert "episodes" in line
    assert Entry.objects.filter(title=f"{GOOD_TITLE} 0").exists()
    episodes = {e.episode_id: e for e in PodcastEpisode.objects.all()}
    assert set(episodes) == {"ep-1", "ep-2", "ep-3", "ep-4"}
    assert episodes["ep-1"].duration_seconds is None and episodes["ep-4"].duration_seconds == 3723
    assert [c["start_seconds"] for c in episodes["ep-1"].chapters] == [60]
    assert episodes["ep-1"].chapters[0]["url"] == ""
    assert "\x00" not in episodes["ep-1"].title
    assert episodes["ep-2"].transcript.text.startswith("Transkript på svenska med NUL")
    # The failing transcript was tried a bounded number of times, with its reason kept.
    assert episodes["ep-3"].transcript_attempts == 5 and "404" in episodes["ep-3"].transcript_error
    client = Client()
    for path in (
        "/api/v1/podd_episodes",
        "/api/v1/podd_episodes/ep-1",
        "/api/v1/podd_episodes/ep-2",
    ):
        response = client.get(path)
        assert response.status_code == 200, path
        _assert_json_urls(response.json())
    _assert_surfaces_valid()


@pytest.mark.parametrize(("length", "accepted"), [(250, True), (2100, False)])
def test_add_feed_with_a_long_url(length, accepted):
    url = "https://long.example/" + "a" * (length - len("https://long.example/"))
    if accepted:
        call_command("add_feed", url)
        assert Feed.objects.get(url=url).title == url[:200]
    else:
        with pytest.raises(CommandError, match="http\\(s\\) URL"):
            call_command("add_feed", url)
        assert not Feed.objects.exists()


_hostile_text = st.text(
    alphabet=st.one_of(
        st.characters(codec="utf-8", exclude_categories=("Cs",)),
        st.sampled_from(["\x00", "\x7f", "\x85", "\ufffe", "\u2028", "<", "&", "]", "(", "#", "!"]),
    ),
    max_size=60,
)
_hostile_link = st.one_of(
    st.sampled_from(
        [
            "javascript:alert(1)",
            "data:text/html,x",
            "/relativ",
            "//h.example/x",
            "",
            "http://[::1",
            "https://h.example:99999/",
        ]
    ),
    _hostile_text.map(lambda t: "https://h.example/" + t),
)
_hostile_date = st.sampled_from(
    [
        "0000-01-01T00:00:00Z",
        "9999-12-31T23:59:59-12:00",
        "0001-01-01T00:00:00+14:00",
        "garbage",
        "2026-02-30T00:00:00Z",
    ]
)


def _xml(text: str) -> str:
    """Text as XML character references, so any code point reaches feedparser's parser."""
    return "".join(f"&#{ord(c)};" for c in text)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(title=_hostile_text, link=_hostile_link, image=_hostile_link, updated=_hostile_date)
def test_generated_hostile_items(server, private_fetching, capsys, title, link, image, updated):
    """Hypothesis: any title, link, image URL and date in an item beside a good one."""
    Feed.objects.all().delete()
    body = (
        '<?xml version="1.0" encoding="UTF-8"?>\n<feed xmlns="http://www.w3.org/2005/Atom" '
        'xmlns:media="http://search.yahoo.com/mrss/"><title>Gen</title>'
        f"<entry><id>urn:h</id><title>Apple {_xml(title)}</title>"
        f'<link href="{_xml(link)}"/><updated>{updated}</updated>'
        f'<media:content url="{_xml(image)}" medium="image"/>'
        f"<summary>Apple {_xml(title)}</summary></entry>"
        "<entry><id>urn:g</id><title>Apple bra</title><link href='https://good.example/gen'/>"
        "<updated>2026-01-01T00:00:00Z</updated><summary>Apple bra.</summary></entry></feed>"
    ).encode()
    call_command("add_feed", _serve(server, "/gen.xml", body))
    _ingest(capsys)
    assert Entry.objects.filter(title="Apple bra").exists()
    _assert_surfaces_valid()


# Surfaces


def _assert_surfaces_valid() -> None:
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
            _assert_rss_valid(text)
        elif path.endswith((".md", ".txt")):
            _assert_markdown_valid(text)
        else:
            _assert_json_urls(response.json())
    # And every read of the API, strictly as its OpenAPI document says.
    StrictWalk(client).every_read()


def _assert_rss_valid(text: str) -> None:
    # Our own response, parsed to prove it is XML (raises otherwise).
    root = ET.fromstring(text.encode())  # noqa: S314
    for item in root.iter("item"):
        assert _URI.match(item.findtext("link") or ""), item.findtext("link")
        assert "<script" not in (item.findtext("description") or "").lower()
        for enclosure in item.iter("enclosure"):
            assert _URI.match(enclosure.get("url", "")), enclosure.get("url")


def _assert_markdown_valid(text: str) -> None:
    body = text
    if text.startswith("---\n"):
        front, body = text[4:].split("\n---\n", 1)
        meta = yaml.safe_load(front)  # raises on invalid YAML
        _assert_json_urls(meta)
    assert "<script" not in body.lower() and "<img" not in body.lower(), body[:400]
    for destination in _MD_LINK.findall(body):
        assert _URI.match(destination), destination


def _assert_json_urls(value: object, key: str = "") -> None:
    if isinstance(value, dict):
        for name, item in value.items():
            _assert_json_urls(item, str(name))
    elif isinstance(value, list):
        for item in value:
            _assert_json_urls(item, key)
    elif isinstance(value, str) and value and _URL_KEYS.search(key):
        assert _URI.match(value), (key, value)


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
            _assert_markdown_valid(document)
        _assert_json_urls(result.structured_content)
