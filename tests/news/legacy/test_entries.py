"""Legacy JSON entry lists over real HTTP: shape, relevance, items, caps, query counts."""

from datetime import timedelta

import pytest
from django.utils import timezone

# Each test in a rolled-back transaction: requests run in-process (tests/support/inprocess.py).
pytestmark = pytest.mark.django_db

FIELDS = {"id", "title", "url", "image", "summary", "source", "source_id", "posted", "published_at"}


def test_entries_json_lists_relevant_entries_newest_first_in_the_legacy_shape(
    http, make_feed, make_entry
):
    feed = make_feed(title="MacSajten")
    older = make_entry(
        feed, published_at=timezone.now() - timedelta(hours=2), image_url="https://i.example/a.jpg"
    )
    newer = make_entry(feed, published_at=timezone.now() - timedelta(minutes=5))
    make_entry(feed, platform_relevant=False)

    response = http.get("/entries.json")

    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("application/json")
    entries = response.json()["entries"]
    assert [e["id"] for e in entries] == [newer.pk, older.pk]
    assert set(entries[1]) == FIELDS
    assert entries[1] == {
        "id": older.pk,
        "title": older.title,
        "url": older.url,
        "image": "https://i.example/a.jpg",
        "summary": older.summary_translated,
        "source": "MacSajten",
        "source_id": feed.pk,
        "posted": "för 2 timmar sedan",
        "published_at": older.published_at.isoformat(),
    }


def test_an_entry_without_a_publication_date_has_null_posted_and_published_at(
    http, make_feed, make_entry
):
    entry = make_entry(make_feed(), published_at=None)

    body = http.get(f"/entries/{entry.pk}.json").json()

    assert (body["posted"], body["published_at"]) == (None, None)


# One set of 101 entries for every case: making them is most of the test's cost.
ITEMS_CASES = [
    ("2", 2),
    ("abc", 30),
    ("-1", 30),
    ("0", 30),
    ("100000", 100),
    ("9" * 400, 100),
    ("", 30),
]


def test_items_is_optional_capped_at_100_and_odd_values_never_fail(http, make_feed, make_entry):
    feed = make_feed()
    for _ in range(101):
        make_entry(feed)

    answers = {
        items: http.get("/entries.json", params={"items": items})
        for items, _expected in ITEMS_CASES
    }

    for items, expected in ITEMS_CASES:
        assert answers[items].status_code == 200, items
        assert len(answers[items].json()["entries"]) == expected, items


def test_the_list_costs_the_same_few_queries_whatever_its_length(
    http, served_queries, make_feed, make_entry, make_tag
):
    tag = make_tag("iPhone")
    for feed in (make_feed(), make_feed(), make_feed()):
        for _ in range(10):
            make_entry(feed, tags=[tag])

    response = http.get("/entries.json", params={"items": 100})

    assert len(response.json()["entries"]) == 30
    assert 0 < len(served_queries) <= 2


def test_popular_orders_by_views(http, make_feed, make_entry):
    feed = make_feed()
    quiet = make_entry(feed, view_count=1)
    loud = make_entry(feed, view_count=50)
    make_entry(feed, view_count=500, platform_relevant=False)

    entries = http.get("/entries/popular.json").json()["entries"]

    assert [e["id"] for e in entries] == [loud.pk, quiet.pk]


def test_one_entry_by_id(http, make_feed, make_entry):
    entry = make_entry(make_feed())

    response = http.get(f"/entries/{entry.pk}.json")

    assert response.status_code == 200
    assert response.json()["id"] == entry.pk


@pytest.mark.parametrize(
    "path",
    [
        "/entries/999999.json",
        "/entries/99999999999999999999.json",
        "/entries/999999999999999999999999999999.json",
        "/entries/abc.json",
        "/entries/-1.json",
        "/entries/1.json/",
        "/entries/..%2F..%2Fetc%2Fpasswd.json",
        "/nowhere.json",
    ],
)
def test_unknown_ids_and_paths_get_a_404_with_an_html_body(http, path):
    response = http.get(path)

    assert response.status_code == 404
    assert response.headers["Content-Type"].startswith("text/html")


def test_an_irrelevant_entry_is_not_served_by_id(http, make_feed, make_entry):
    entry = make_entry(make_feed(), platform_relevant=False)

    assert http.get(f"/entries/{entry.pk}.json").status_code == 404


def test_json_needs_the_suffix_an_accept_header_is_not_enough(http, make_feed, make_entry):
    entry = make_entry(make_feed())

    response = http.get(f"/entries/{entry.pk}", headers={"Accept": "application/json"})

    assert not response.headers["Content-Type"].startswith("application/json")


def test_legacy_responses_are_publicly_cacheable_for_a_minute(http):
    response = http.get("/entries.json")

    assert "public" in response.headers["Cache-Control"]
    assert "max-age=60" in response.headers["Cache-Control"]
    assert "Set-Cookie" not in response.headers
