"""Legacy /feeds.json, /feeds/:id.json, /tags.json and /tags/:id.json over real HTTP."""

import pytest

from news_site.news.models import FeedKind

# Each test in a rolled-back transaction: requests run in-process (tests/support/inprocess.py).
pytestmark = pytest.mark.django_db


def test_feeds_json_lists_active_sources_as_id_and_title(http, make_feed, served_queries):
    active = make_feed(title="Aktiv")
    make_feed(title="Avstängd", is_active=False)
    make_feed(title="Podden", kind=FeedKind.PODCAST)

    response = http.get("/feeds.json")

    assert response.json() == {"feeds": [{"id": active.pk, "title": "Aktiv"}]}
    assert len(served_queries) == 1


def test_a_feeds_entries(http, make_feed, make_entry):
    feed, other = make_feed(), make_feed()
    mine = make_entry(feed)
    make_entry(other)

    entries = http.get(f"/feeds/{feed.pk}.json").json()["entries"]

    assert [e["id"] for e in entries] == [mine.pk]


def test_tags_json_and_a_tags_entries(http, make_feed, make_entry, make_tag):
    iphone, mac = make_tag("iPhone"), make_tag("Mac")
    tagged = make_entry(make_feed(), tags=[iphone])
    make_entry(make_feed(), tags=[mac])

    tags = http.get("/tags.json").json()
    entries = http.get(f"/tags/{iphone.pk}.json", params={"items": "1"}).json()["entries"]

    assert tags == {"tags": [{"id": iphone.pk, "name": "iPhone"}, {"id": mac.pk, "name": "Mac"}]}
    assert [e["id"] for e in entries] == [tagged.pk]


@pytest.mark.parametrize(
    "path", ["/feeds/424242.json", "/tags/424242.json", "/feeds/99999999999999999999.json"]
)
def test_unknown_feeds_and_tags_are_404(http, path):
    response = http.get(path)

    assert response.status_code == 404
    assert response.headers["Content-Type"].startswith("text/html")


def test_a_write_method_is_refused(http):
    assert http.post("/entries.json").status_code in (403, 405)
