"""The editors' admin over real HTTP, logged in as a staff account."""

import re

import pytest
from django.conf import settings

from news_site.news.models import GuidePageType, SummaryState
from tests.support.news_factories import GuideFactory

# Each test in a rolled-back transaction: requests run in-process (tests/support/inprocess.py).
pytestmark = pytest.mark.django_db


@pytest.fixture
def editor(http, editor_client):
    """The in-process HTTP client with the editor's session."""
    name = settings.SESSION_COOKIE_NAME
    http.cookies.set(name, editor_client.cookies[name].value)
    return http


def _csrf(html: str) -> str:
    return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html)[1]


def test_editors_see_feed_health_with_the_last_error(editor, make_feed):
    feed = make_feed(title="Trasig", last_error="HTTP 503 från källan", error_count=4)

    listing = editor.get("/admin/news/feed/")
    detail = editor.get(f"/admin/news/feed/{feed.pk}/change/")

    assert listing.status_code == 200
    assert "Trasig" in listing.text
    assert "HTTP 503 från källan" in detail.text


def test_editors_search_and_filter_entries(editor, make_feed, make_entry):
    feed = make_feed()
    make_entry(feed, title="Apple släpper iOS 19")
    make_entry(feed, title="Något annat", platform_relevant=False)

    found = editor.get(
        "/admin/news/entry/", params={"q": "iOS 19", "platform_relevant__exact": "1"}
    )

    assert found.status_code == 200
    assert "Apple släpper iOS 19" in found.text
    assert "Något annat" not in found.text


def test_an_edited_summary_is_kept_as_the_editors(editor, make_feed, make_entry):
    entry = make_entry(make_feed())
    page = editor.get(f"/admin/news/entry/{entry.pk}/change/")

    response = editor.post(
        f"/admin/news/entry/{entry.pk}/change/",
        data={
            "csrfmiddlewaretoken": _csrf(page.text),
            "title": entry.title,
            "author": "",
            "image_url": "",
            "language": "sv",
            "summary_translated": "Redaktörens egen sammanfattning.",
            "summary_original": entry.summary_original,
            "platform_relevant": "on",
            "story": "",
        },
        headers={"Referer": f"{editor.base_url}/admin/news/entry/{entry.pk}/change/"},
    )

    assert response.status_code == 302
    entry.refresh_from_db()
    assert entry.summary_translated == "Redaktörens egen sammanfattning."
    assert entry.summary_state == SummaryState.EDITED


def test_a_guides_markdown_preview_renders_and_escapes_html(editor):
    guide = GuideFactory(
        slug="iphone",
        title="iPhone",
        page_type=GuidePageType.PRODUCT_HUB,
        body="## Modeller\n\n<script>alert(1)</script>",
    )

    response = editor.get(f"/admin/news/productguide/{guide.pk}/change/")

    assert "<h2>Modeller</h2>" in response.text
    assert "<script>alert(1)</script>" not in response.text


def test_the_admin_needs_a_staff_login(http):
    response = http.get("/admin/news/entry/")

    assert response.status_code == 302
    assert "/admin/login/" in response.headers["Location"]


def test_a_stale_form_gets_a_page_in_the_admins_look_that_says_what_to_do(editor):
    """A form whose token went stale (the editor logged in or out in another tab) is refused
    with the admin's header and stylesheet, in Swedish, and a way back: not Django's bare page."""
    form = editor.get("/admin/news/tag/add/")
    assert "Nyhetstjänsten: redaktionen" in form.text

    refused = editor.post(
        "/admin/news/tag/add/",
        data={"csrfmiddlewaretoken": "stale" * 8, "name": "Ny", "slug": "ny"},
        headers={"Referer": "http://testserver/admin/news/tag/add/"},
    )

    assert refused.status_code == 403
    assert "Formuläret kunde inte sparas" in refused.text
    assert "Nyhetstjänsten: redaktionen" in refused.text
    assert "admin/css/base.css" in refused.text
    assert 'href="/admin/news/tag/add/"' in refused.text
    assert "CSRF" not in refused.text
