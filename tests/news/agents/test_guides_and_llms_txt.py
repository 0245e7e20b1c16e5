"""Product guides as markdown at /{slug}.md, and /llms.txt listing them."""

import pytest
import yaml

from news_site.news.models import GuidePageType
from tests.support.news_factories import GuideFactory

# Each test in a rolled-back transaction: requests run in-process (tests/support/inprocess.py).
pytestmark = pytest.mark.django_db


@pytest.fixture
def guides():
    return [
        GuideFactory(
            slug="iphone",
            title="iPhone",
            page_type=GuidePageType.PRODUCT_HUB,
            description="Allt om iPhone.",
            body="## Modeller\n\nText om iPhone.",
        ),
        GuideFactory(
            slug="iphone-18-rykten",
            title="iPhone 18: rykten",
            page_type=GuidePageType.RUMOR,
            body="Ryktena hittills.",
        ),
        GuideFactory(
            slug="gammal",
            title="Opublicerad",
            page_type=GuidePageType.PRODUCT_HUB,
            body="Dold.",
            is_published=False,
        ),
    ]


def test_a_guide_is_served_as_markdown(http, guides):
    response = http.get("/iphone.md")

    assert response.status_code == 200
    assert response.headers["Content-Type"] == "text/markdown; charset=utf-8"
    assert response.headers["X-Robots-Tag"] == "noindex"
    assert "Set-Cookie" not in response.headers
    assert frontmatter(response.text)["page_type"] == "product_hub"
    assert "# iPhone\n\n## Modeller\n\nText om iPhone.\n" in response.text


@pytest.mark.parametrize(
    "path",
    [
        "/gammal.md",
        "/okand.md",
        "/..%2Fsettings.md",
        "/%2e%2e/%2e%2e/etc/passwd.md",
        "/IPHONE.md",
        "/iphone..md",
        "/a/iphone.md",
    ],
)
def test_unknown_unpublished_and_hostile_slugs_are_404(http, guides, path):
    response = http.get(path)

    assert response.status_code == 404
    assert response.headers["Content-Type"].startswith("text/html")


def test_llms_txt_follows_the_convention_and_lists_the_current_guides(http, guides):
    response = http.get("/llms.txt")

    assert response.status_code == 200
    assert response.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert response.headers["X-Robots-Tag"] == "noindex"
    lines = response.text.splitlines()
    assert lines[0] == "# Nyhetstjänsten"
    assert lines[2].startswith("> ")
    assert f"- [iPhone]({http.base_url}/iphone.md): Allt om iPhone." in lines
    assert f"- [iPhone 18: rykten]({http.base_url}/iphone-18-rykten.md)" in lines
    assert "gammal" not in response.text
    assert f"{http.base_url}/index.md" in response.text


def frontmatter(text: str) -> dict:
    return yaml.safe_load(text.split("---\n", 2)[1])
