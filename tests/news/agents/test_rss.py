"""/entries.rss: valid RSS 2.0 of the latest 50 relevant entries, with tags and images."""

import html
import xml.etree.ElementTree as ET

import feedparser
import pytest

# Each test in a rolled-back transaction: requests run in-process (tests/support/inprocess.py).
pytestmark = pytest.mark.django_db


def test_the_rss_feed_parses_cleanly_with_tags_and_images(
    http, make_feed, make_entry, make_tag, served_queries
):
    feed = make_feed(title="MacSajten")
    tag = make_tag("iPhone")
    for _ in range(52):
        make_entry(feed, tags=[tag], image_url="https://img.example/a.png")
    hidden = make_entry(feed, platform_relevant=False)

    response = http.get("/entries.rss")

    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("application/rss+xml")
    parsed = feedparser.parse(response.content)
    assert not parsed.bozo, parsed.get("bozo_exception")
    assert parsed.version == "rss20"
    assert len(parsed.entries) == 50
    item = parsed.entries[0]
    assert [t.term for t in item.tags] == ["iPhone"]
    assert item.enclosures[0].href == "https://img.example/a.png"
    assert item.enclosures[0].type == "image/png"
    assert "enligt MacSajten, via Nyhetstjänsten" in item.summary
    assert all(e.id != f"entry-{hidden.pk}" for e in parsed.entries)
    assert 0 < len(served_queries) <= 2


def test_titles_and_creators_are_escaped_like_descriptions(http, make_feed, make_entry):
    """Readers render <title>, <dc:creator> and <description> as HTML: source markup in any of
    them arrives as text (one escaping level, the same for all three), never as a tag."""
    feed = make_feed(title="Evil <b>källa</b> & co")
    make_entry(
        feed,
        title="Apple <script>alert(1)</script> & Google",
        summary_translated="AT&T och <i>Apple</i>.",
    )

    response = http.get("/entries.rss")

    item = ET.fromstring(response.content).find("channel/item")  # noqa: S314 - our own answer
    dc = "{http://purl.org/dc/elements/1.1/}creator"
    title, creator, description = (item.findtext(n) for n in ("title", dc, "description"))
    for element in (title, creator, description):
        assert "<" not in element, element
    assert html.unescape(title) == "Apple <script>alert(1)</script> & Google"
    assert html.unescape(creator) == "Evil <b>källa</b> & co"
    assert html.unescape(description).startswith("AT&T och <i>Apple</i>.")
