"""Hostile feeds through the real commands: every trigger of a broken ingest or a broken surface
(issue #11), as a table of publishers' documents and a Hypothesis generator of hostile item
values. Each case runs `add_feed` and `ingest` against local HTTP servers beside a well-behaved
source and then checks (tests/news/hostile.py) that

- the command exits as it should (0: failures are recorded on their unit, not raised),
- the other units were stored (the good source's item, the good item beside the bad one),
- every public surface answers 200 with valid output: RSS parses as XML, front matter as YAML,
  no `<script` in markup, every URL an absolute http(s) URI, MCP tool answers likewise, and
  every read of /api/v1 and the legacy JSON validates strictly against the OpenAPI document.

Runs on SQLite and, with NEWS_DATABASE_URL set, on PostgreSQL (NUL and column lengths are
only enforced there).
"""

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from news_site.news.models import Entry, Feed
from tests.news.hostile import (
    GOOD_TITLE,
    assert_surfaces_valid,
    good,
    ingest,
    item,
    rss,
    serve,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.every_backend]


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
    ("nul-title", lambda s: rss([item("Apple &#0;NUL", "https://h.example/nul"), good("a")])),
    (
        "control-characters",
        lambda s: rss(
            [item("Apple &#127;&#133;&#65534;&#1;kontroll", "https://h.example/c"), good("b")]
        ),
    ),
    (
        "link-too-long-once-normalised",
        lambda s: rss([item("Apple lång", "https://h.example/" + "a " * 995), good("c")]),
    ),
    (
        "million-comment-openers",
        lambda s: rss(
            [item("Apple kommentar", "https://h.example/k", "&lt;!--" * 250_000), good("d")]
        ),
    ),
    (
        "unterminated-anchors",
        lambda s: rss(
            [
                item("Apple ankare", "https://h.example/u", "&lt;a href=&quot;" * 100_000),
                good("e"),
            ]
        ),
    ),
    (
        "markup-in-text",
        lambda s: rss(
            [
                item(
                    "# Apple &amp;lt;script&amp;gt;alert(1)&amp;lt;/script&amp;gt; "
                    "[x](javascript:alert(1)) ![i](data:text/html,x)",
                    "https://h.example/m",
                    "Apple &amp;lt;script&amp;gt;x&amp;lt;/script&amp;gt; "
                    "[klicka](javascript:alert(1))",
                ),
                good("f"),
            ]
        ),
    ),
    (
        "hostile-image-urls",
        lambda s: rss(
            [
                item(
                    "Apple bild js",
                    "https://h.example/i1",
                    extra='<enclosure url="javascript:alert(1)" type="image/jpeg" length="0"/>',
                ),
                item(
                    "Apple bild data",
                    "https://h.example/i2",
                    extra='<enclosure url="data:image/png;base64,AAAA" type="image/png" '
                    'length="0"/>',
                ),
                item(
                    "Apple bild relativ",
                    "https://h.example/i3",
                    extra='<enclosure url="/img/a b.jpg" type="image/jpeg" length="0"/>',
                ),
            ]
        ),
    ),
    (
        "relative-and-odd-links",
        lambda s: rss(
            [
                item("Apple relativ", "/artiklar/1"),
                item("Apple mellanslag", 'https://h.example/a b"c'),
                item("Apple javascript-länk", "javascript:alert(1)"),
                item("Apple utan länk", ""),
                good("g"),
            ]
        ),
    ),
    (
        "audio-duration-overflow-in-article-feed",
        lambda s: rss(
            [
                item(
                    "Apple ljud",
                    "https://h.example/ljud",
                    extra='<enclosure url="https://h.example/a.mp3" type="audio/mpeg" length="1"/>'
                    "<itunes:duration>1e400</itunes:duration>",
                ),
                good("h"),
            ]
        ),
    ),
]


@pytest.mark.parametrize(("case", "body"), ARTICLE_CASES, ids=[c[0] for c in ARTICLE_CASES])
def test_a_hostile_article_feed_stops_nothing_and_breaks_no_surface(
    server, private_fetching, capsys, case, body
):
    call_command("add_feed", serve(server, "/good.xml", rss([good("0")])))
    call_command(
        "add_feed",
        serve(server, "/hostile.xml", body(server), {"Content-Location": "/moved/feed.xml"}),
        "--no-discover",
    )
    line = ingest(capsys)

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
    assert_surfaces_valid()


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
    assert_surfaces_valid()
    posted = {e["title"]: e["posted"] for e in Client().get("/entries.json").json()["entries"]}
    assert "1928" not in posted["Apple gammal"] and posted["Apple gammal"].endswith("1")


@pytest.mark.parametrize(("length", "accepted"), [(250, True), (2100, False)])
def test_add_feed_with_a_long_url(length, accepted):
    url = "https://long.example/" + "a" * (length - len("https://long.example/"))
    if accepted:
        call_command("add_feed", url, "--no-discover")
        assert Feed.objects.get(url=url).title == url[:200]
    else:
        with pytest.raises(CommandError, match="http\\(s\\) URL"):
            call_command("add_feed", url, "--no-discover")
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
    call_command("add_feed", serve(server, "/gen.xml", body), "--no-discover")
    ingest(capsys)
    assert Entry.objects.filter(title="Apple bra").exists()
    assert_surfaces_valid()
