"""Fuzz of the feed parser wrapper: whatever a source sends (any bytes, XML-ish text, broken RSS
and Atom), parse_feed gives a ParsedFeed or raises UnreadableFeed, never anything else."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from news_site.news.parsing import ParsedFeed, UnreadableFeed, parse_feed

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

_TEXT = st.text(max_size=40)
_NAMES = st.sampled_from(
    [
        "rss", "channel", "item", "title", "link", "guid", "pubDate", "description", "ttl",
        "feed", "entry", "updated", "published", "content", "summary", "enclosure", "image",
        "itunes:duration", "media:content", "url", "href", "x",
    ]
)  # fmt: skip
_PIECES = st.one_of(
    _NAMES.map(lambda name: f"<{name}>"),
    _NAMES.map(lambda name: f"</{name}>"),
    st.tuples(_NAMES, _NAMES, _TEXT).map(lambda t: f'<{t[0]} {t[1].replace(":", "")}="{t[2]}"/>'),
    _TEXT,
    st.sampled_from(
        [
            '<?xml version="1.0" encoding="UTF-8"?>',
            '<?xml version="1.0" encoding="iso-8859-1"?>',
            '<rss version="2.0">',
            '<feed xmlns="http://www.w3.org/2005/Atom">',
            "<![CDATA[",
            "]]>",
            "&amp;",
            "&nbsp;",
            "&#0;",
            "&#x110000;",
            '<!DOCTYPE x [<!ENTITY a "aaaaaaaaaa">]>',
            "&a;",
            "<!-- -->",
            "Tue, 31 Feb 2026 25:61:00 +9999",
            "2026-13-45T99:99:99Z",
            "-1",
            "99999999999999999999",
        ]
    ),
)
_XMLISH = st.lists(_PIECES, max_size=40).map("".join)


def _parses_or_refuses(body: bytes, content_type: str = "") -> None:
    try:
        parsed = parse_feed(body, content_type=content_type)
    except UnreadableFeed as exc:
        assert str(exc)
    else:
        assert isinstance(parsed, ParsedFeed)
        assert all(item.guid or item.link for item in parsed.items)


@FUZZ
@given(body=st.binary(max_size=600))
def test_any_bytes_parse_or_are_refused_as_unreadable(body):
    _parses_or_refuses(body)


@FUZZ
@given(
    text=_XMLISH,
    encoding=st.sampled_from(["utf-8", "utf-16", "latin-1"]),
    content_type=st.sampled_from(["", "application/rss+xml", "text/html; charset=koi8-r"]),
)
def test_xmlish_text_parses_or_is_refused_as_unreadable(text, encoding, content_type):
    _parses_or_refuses(text.encode(encoding, errors="replace"), content_type)


@FUZZ
@given(fields=st.lists(st.tuples(_NAMES, _XMLISH), max_size=6), items=st.integers(0, 3))
def test_rss_with_garbage_in_its_items_parses_or_is_refused(fields, items):
    item = "".join(f"<{name}>{value}</{name}>" for name, value in fields)
    body = (
        '<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>K</title>'
        + f"<item>{item}</item>" * items
        + "</channel></rss>"
    )
    _parses_or_refuses(body.encode())
