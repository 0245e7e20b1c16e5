"""GET /api/v1/entries, /entries/popular and /entries/:id over real HTTP."""

from datetime import timedelta

import pytest
from django.utils import timezone

from news_site.news.models import Entry, EntryView

# Each test in a rolled-back transaction: requests run in-process (tests/support/inprocess.py).
pytestmark = pytest.mark.django_db

ENTRY_FIELDS = {
    "id",
    "url",
    "main_image_url",
    "published_at",
    "source_count",
    "click_count",
    "popularity_score",
    "platform_relevant",
    "feed",
    "content",
    "tags",
}


def test_entries_lists_relevant_entries_newest_first_in_the_envelope(
    http, make_feed, make_entry, make_tag
):
    feed = make_feed(title="MacSajten")
    tag = make_tag("iPhone")
    older = make_entry(
        feed,
        published_at=timezone.now() - timedelta(hours=3),
        image_url="https://i.example/a.jpg",
        tags=[tag],
        language="en",
        summary_original="An English summary.",
        summary_translated="En svensk sammanfattning.",
    )
    newer = make_entry(feed, published_at=timezone.now() - timedelta(minutes=5))
    make_entry(feed, platform_relevant=False)

    response = http.get("/api/v1/entries")

    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"data", "pagination", "meta"}
    assert [e["id"] for e in body["data"]] == [newer.pk, older.pk]
    assert body["pagination"] == {
        "page": 1,
        "per_page": 20,
        "has_more": False,
        "next_page": None,
        "next_cursor": None,
    }
    assert body["meta"] == {"api_version": "v1", "lang": "sv"}
    item = body["data"][1]
    assert set(item) == ENTRY_FIELDS
    assert item == {
        "id": older.pk,
        "url": older.url,
        "main_image_url": "https://i.example/a.jpg",
        "published_at": item["published_at"],
        "source_count": 1,
        "click_count": 0,
        "popularity_score": 0.0,
        "platform_relevant": True,
        "feed": {"id": feed.pk, "title": "MacSajten"},
        "content": {
            "original": {"language": "en", "title": older.title, "summary": "An English summary."},
            "translated": {"language": "sv", "summary": "En svensk sammanfattning."},
        },
        "tags": [{"id": tag.pk, "name": "iPhone"}],
    }
    assert timezone.datetime.fromisoformat(item["published_at"]) == older.published_at
    assert response.headers["Cache-Control"] == "public, max-age=60"
    assert "Authorization" in response.headers["Vary"]


def test_lang_en_returns_the_english_summary_where_one_exists(http, make_feed, make_entry):
    english = make_entry(make_feed(language="en"), language="en", summary_original="English lead.")
    swedish = make_entry(make_feed(language="sv"), language="sv")

    data = http.get("/api/v1/entries", params={"lang": "en"}).json()["data"]

    translated = {item["id"]: item["content"]["translated"] for item in data}
    assert translated[english.pk] == {"language": "en", "summary": "English lead."}
    assert translated[swedish.pk] == {"language": "en", "summary": ""}


@pytest.mark.parametrize(
    "params",
    [
        {"lang": "de"},
        {"per_page": "0"},
        {"per_page": "101"},
        {"per_page": "many"},
        {"page": "0"},
        {"sort": "oldest"},
        # Empty is a value too (DRF alone would read it as absent).
        {"page": ""},
        {"per_page": ""},
        {"lang": ""},
        {"sort": ""},
    ],
)
def test_a_bad_parameter_is_a_400_in_the_error_envelope(http, params):
    response = http.get("/api/v1/entries", params=params)

    assert response.status_code == 400
    body = response.json()
    assert body["error"]["type"] == "invalid_parameter"
    assert next(iter(params)) in body["error"]["message"]
    assert body["meta"] == {"api_version": "v1"}


def test_pages_follow_each_other_without_gaps(http, make_feed, make_entry):
    feed = make_feed()
    entries = [make_entry(feed) for _ in range(5)]
    expected = [e.pk for e in sorted(entries, key=lambda e: (e.listed_at, e.pk), reverse=True)]

    first = http.get("/api/v1/entries", params={"per_page": 2}).json()
    third = http.get("/api/v1/entries", params={"per_page": 2, "page": 3}).json()

    assert [e["id"] for e in first["data"]] == expected[:2]
    cursor = first["pagination"].pop("next_cursor")
    assert isinstance(cursor, str)
    assert first["pagination"] == {"page": 1, "per_page": 2, "has_more": True, "next_page": 2}
    assert [e["id"] for e in third["data"]] == expected[4:]
    assert third["pagination"]["has_more"] is False


def test_popular_orders_by_views_and_sort_popular_is_the_same(http, make_feed, make_entry):
    feed = make_feed()
    quiet = make_entry(feed, view_count=1)
    popular = make_entry(feed, view_count=50)

    popular_ids = [e["id"] for e in http.get("/api/v1/entries/popular").json()["data"]]
    sorted_ids = [
        e["id"] for e in http.get("/api/v1/entries", params={"sort": "popular"}).json()["data"]
    ]

    assert popular_ids == sorted_ids == [popular.pk, quiet.pk]


def test_the_list_runs_a_fixed_number_of_queries(
    http, make_feed, make_entry, make_tag, served_queries
):
    tags = [make_tag(f"Tagg {n}") for n in range(3)]
    for n in range(30):
        make_entry(make_feed(), tags=tags[: n % 3])

    with served_queries.at_most(2):
        response = http.get("/api/v1/entries", params={"per_page": 30})

    assert len(response.json()["data"]) == 30


def test_entry_detail_counts_one_view_per_viewer_and_day(http, make_feed, make_entry):
    entry = make_entry(make_feed())

    first = http.get(f"/api/v1/entries/{entry.pk}")
    http.get(f"/api/v1/entries/{entry.pk}")

    assert first.status_code == 200
    assert first.json()["data"]["id"] == entry.pk
    assert first.headers["Cache-Control"] == "private, no-cache"
    entry.refresh_from_db()
    assert entry.view_count == 1
    assert EntryView.objects.get(entry=entry).count == 1
    listed = http.get("/api/v1/entries").json()["data"][0]
    assert listed["click_count"] == 1
    assert listed["popularity_score"] == 1.0


def test_a_logged_in_reader_counts_separately_from_their_address(
    http, make_feed, make_entry, make_account
):
    entry = make_entry(make_feed())
    _account, auth = make_account()

    http.get(f"/api/v1/entries/{entry.pk}")
    http.get(f"/api/v1/entries/{entry.pk}", headers=auth)

    assert Entry.objects.get(pk=entry.pk).view_count == 2


@pytest.mark.parametrize("path", ["/api/v1/entries/999999", "/api/v1/entries/99999999999999999999"])
def test_unknown_and_irrelevant_entries_are_404_in_the_envelope(http, make_feed, make_entry, path):
    hidden = make_entry(make_feed(), platform_relevant=False)

    for target in (path, f"/api/v1/entries/{hidden.pk}"):
        response = http.get(target)
        assert response.status_code == 404
        assert response.json()["error"]["type"] == "not_found"


def test_unknown_paths_and_methods_answer_in_the_envelope(http):
    missing = http.get("/api/v1/nothing/here")
    wrong_method = http.delete("/api/v1/entries")

    assert missing.status_code == 404
    assert missing.json() == {
        "error": {"type": "not_found", "message": "no such endpoint"},
        "meta": {"api_version": "v1"},
    }
    assert wrong_method.status_code == 405
    assert wrong_method.json()["error"]["type"] == "method_not_allowed"
    assert "GET" in wrong_method.headers["Allow"]


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/entries/%0A",
        "/api/v1/%0A",
        "/api/v1/entries/1%0A",
        "/api/v1/n%C3%A5got",
        "/api/v1/tags/%C3%A5%0D%0A",
        "/api/v1/stories/1-%E2%80%AE",
        "/api/v1/feeds/%00",
    ],
)
def test_odd_paths_are_404_in_the_envelope(http, path):
    response = http.get(path)

    assert response.status_code == 404, response.text[:200]
    assert response.headers["Content-Type"] == "application/json"
    assert response.json()["error"]["type"] == "not_found"
