"""GET /api/v1/stories and /stories/:id over real HTTP (rows as clustering leaves them)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from news_site.news.models import Story, StoryStatus
from tests.support.news_factories import StoryFactory

# Each test in a rolled-back transaction: requests run in-process (tests/support/inprocess.py).
pytestmark = pytest.mark.django_db

STORY_FIELDS = {
    "id",
    "title",
    "lead",
    "status",
    "entries_count",
    "first_entry_published_at",
    "last_entry_published_at",
    "image_url",
    "url",
}


def _story(title: str, *, updated_hours_ago: int, status=StoryStatus.ACTIVE, **values) -> Story:
    now = timezone.now()
    defaults = {
        "title": title,
        "slug": title.lower().replace(" ", "-"),
        "lead": f"Ingress om {title}.",
        "body": f"Brödtext om {title}.",
        "status": status,
        "updated_at": now - timedelta(hours=updated_hours_ago),
        "entries_count": 2,
        "source_count": 2,
        "first_entry_published_at": now - timedelta(hours=30),
        "last_entry_published_at": now - timedelta(hours=updated_hours_ago),
    }
    return StoryFactory(**{**defaults, **values})


def test_stories_most_recently_updated_first_with_the_spec_fields(http):
    older = _story("Ny iPad", updated_hours_ago=5, image_url="https://i.example/ipad.jpg")
    newer = _story("Ny iPhone", updated_hours_ago=1)
    _story("Tom", updated_hours_ago=0, entries_count=0)

    body = http.get("/api/v1/stories").json()

    assert [s["id"] for s in body["data"]] == [newer.pk, older.pk]
    item = body["data"][1]
    assert set(item) == STORY_FIELDS
    assert item["image_url"] == "https://i.example/ipad.jpg"
    assert body["data"][0]["image_url"] is None
    assert item["status"] == "active"
    assert item["url"].endswith(f"/api/v1/stories/{older.pk}-ny-ipad")
    assert item["entries_count"] == 2


def test_status_filters_and_a_bad_status_is_400(http):
    _story("Aktiv", updated_hours_ago=1)
    dormant = _story("Vilande", updated_hours_ago=90, status=StoryStatus.DORMANT)

    filtered = http.get("/api/v1/stories", params={"status": "dormant"}).json()["data"]
    bad = http.get("/api/v1/stories", params={"status": "sleeping"})

    assert [s["id"] for s in filtered] == [dormant.pk]
    assert bad.status_code == 400
    assert bad.json()["error"]["type"] == "invalid_parameter"


def test_story_detail_by_id_or_id_slug_with_links_and_members(http, make_feed, make_entry):
    before = _story("Rykten om iPhone", updated_hours_ago=100, status=StoryStatus.DORMANT)
    story = _story("Ny iPhone", updated_hours_ago=1, predecessor=before)
    after = _story("iPhone i butik", updated_hours_ago=0, predecessor=story)
    member = make_entry(make_feed(), story=story)
    make_entry(make_feed(), story=story, platform_relevant=False)

    by_id = http.get(f"/api/v1/stories/{story.pk}").json()
    by_slug = http.get(f"/api/v1/stories/{story.pk}-ny-iphone").json()

    assert by_id == by_slug
    data = by_id["data"]
    assert set(data) == STORY_FIELDS | {"body", "predecessor", "successors", "entries"}
    assert data["body"] == "Brödtext om Ny iPhone."
    assert data["predecessor"]["id"] == before.pk
    assert data["predecessor"]["status"] == "dormant"
    assert [s["id"] for s in data["successors"]] == [after.pk]
    assert [e["id"] for e in data["entries"]] == [member.pk]
    assert data["entries"][0]["content"]["translated"]["language"] == "sv"


def test_unknown_story_is_404(http):
    assert http.get("/api/v1/stories/12345").status_code == 404
    assert http.get("/api/v1/stories/12345-anything").json()["error"]["type"] == "not_found"
    assert http.get("/api/v1/stories/not-a-number").status_code == 404
