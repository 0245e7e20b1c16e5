"""The compliance service's page for people at `/`, and the integrators' docs it links."""

import re

import pytest

pytestmark = pytest.mark.django_db


def test_the_landing_page_says_what_the_service_is_and_links_the_references(http):
    response = http.get("/")

    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("text/html")
    assert "public" in response.headers["Cache-Control"]
    assert "homeschool compliance records for 51" in response.text
    for link in (
        "/api/v1/compliance/docs",
        "/api/v1/compliance/schema",
        "/api/v1/compliance/schema/state.v1.json",
        "/docs/compliance-integrators",
    ):
        assert f'href="{link}"' in response.text
        # Every link on it answers (the references need no key).
        assert http.get(link).status_code == 200, link
    # Its own inline style is allowed, scripts stay forbidden.
    policy = response.headers["Content-Security-Policy"]
    assert "style-src 'unsafe-inline'" in policy and "default-src 'none'" in policy
    assert "<script" not in response.text


def test_the_integrators_guide_is_served_with_working_links_between_docs(http):
    html = http.get("/docs/compliance-integrators").text

    assert "<h1>Compliance integrators: the compliance API</h1>" in html
    assert "<pre><code>" in html
    targets = set(re.findall(r'href="(/docs/[^"#]+)', html))
    assert "/docs/compliance-data" in targets
    for target in targets:
        assert http.get(target).status_code == 200, target
    # No link to a file this service does not serve.
    assert not re.search(r'href="[^"]*\.md', html)


@pytest.mark.parametrize("path", ["/docs/settings", "/docs/..%2Fsettings", "/docs/nope"])
def test_other_docs_are_not_served(http, path):
    assert http.get(path).status_code == 404
