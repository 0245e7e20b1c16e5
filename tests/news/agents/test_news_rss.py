"""/entries.rss: valid RSS 2.0 of the latest 50 relevant entries, with tags and images."""

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
