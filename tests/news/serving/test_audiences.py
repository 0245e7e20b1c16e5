"""One language and one clock per audience, the rejected-host answer, and the API reference:
what a developer, an editor and an agent meet first on the news service."""

import re
from datetime import UTC, datetime

import pytest

from tests.support.shared_factories import UserFactory

pytestmark = pytest.mark.django_db


def test_api_errors_are_english_while_the_service_is_swedish(client, settings) -> None:
    assert settings.LANGUAGE_CODE == "sv"
    answer = client.post("/api/v1/auth/login", {}, content_type="application/json")
    assert answer.status_code == 400
    assert answer.json()["error"] == {
        "type": "invalid_parameter",
        "message": "provider: This field is required.",
    }
    wrong = client.post("/api/v1/auth/login", "{", content_type="application/json")
    assert wrong.json()["error"]["message"].startswith("JSON parse error")


def test_english_does_not_leak_into_the_next_admin_page(client) -> None:
    client.post("/api/v1/auth/login", {}, content_type="application/json")
    page = client.get("/admin/login/")
    assert 'lang="sv"' in page.content.decode()
    assert "Användarnamn" in page.content.decode()


def test_a_host_not_served_gets_the_v1_error_shape_under_the_api(client) -> None:
    answer = client.get("/api/v1/feeds", HTTP_HOST="evil.example")
    assert answer.status_code == 400
    assert answer["Content-Type"] == "application/json"
    assert answer.json()["error"]["type"] == "invalid_request"
    assert answer.json()["meta"] == {"api_version": "v1"}
    # Pages for people keep Django's own answer.
    page = client.get("/admin/", HTTP_HOST="evil.example")
    assert page.status_code == 400
    assert not page["Content-Type"].startswith("application/json")


def test_the_android_emulator_host_is_served_when_allowed(client, settings) -> None:
    settings.ALLOWED_HOSTS = ["127.0.0.1", "localhost", "10.0.2.2"]
    assert client.get("/api/v1/feeds", HTTP_HOST="10.0.2.2:8000").status_code == 200


def test_admin_is_swedish_and_shows_times_in_stockholm_with_the_zone(
    client, make_feed, make_entry
) -> None:
    feed = make_feed(title="Källan")
    # 12:00 UTC in January is 13:00 in Stockholm (CET).
    make_entry(feed, published_at=datetime(2026, 1, 15, 12, 0, tzinfo=UTC), title="Vinter")
    user = UserFactory(username="redaktor", email="r@example.com", superuser=True)
    client.force_login(user)
    index = client.get("/admin/").content.decode()
    for label in ("Flöden", "Artiklar", "Taggar", "Nyhetstrådar", "Produktguider", "Poddavsnitt"):
        assert label in index, label
    entry = client.get("/admin/news/entry/").content.decode()
    assert "13:00 CET" in entry
    form = client.get(f"/admin/news/feed/{feed.pk}/change/").content.decode()
    assert "Webbplats" in form and "Nästa hämtning" in form


def test_html_pages_show_the_zone_and_machine_formats_keep_utc(client, make_feed, make_entry):
    entry = make_entry(make_feed(), published_at=datetime(2026, 7, 1, 8, 30, tzinfo=UTC))
    page = client.get(f"/entries/{entry.pk}").content.decode()
    assert "2026-07-01 10:30 CEST" in page
    data = client.get(f"/api/v1/entries/{entry.pk}").json()["data"]
    assert data["published_at"] == "2026-07-01T08:30:00Z"


def test_the_api_reference_is_served_with_its_own_assets(client) -> None:
    page = client.get("/api/v1/docs")
    assert page.status_code == 200
    html = page.content.decode()
    policy = page["Content-Security-Policy"]
    assert "script-src 'self'" in policy
    assert "cdn" not in html.lower()
    scripts = re.findall(r'<script src="([^"]+)"', html)
    assert any("swagger-ui-bundle.js" in src for src in scripts)
    start = next(src for src in scripts if "script" in src and "static" not in src)
    assert client.get(start.replace("&amp;", "&"))["Content-Type"].startswith(
        "application/javascript"
    )
    assert "/api/v1/docs" in client.get("/llms.txt").content.decode()
