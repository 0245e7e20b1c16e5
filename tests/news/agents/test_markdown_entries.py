"""Entry markdown: /entries/:id.md, the same page by Accept on the article URL, /index.md."""

import markdown
import pytest
import yaml

from news_site.news.models import SummaryState

# Each test in a rolled-back transaction: requests run in-process (tests/support/inprocess.py).
pytestmark = pytest.mark.django_db


def _frontmatter(text: str) -> dict:
    assert text.startswith("---\n")
    return yaml.safe_load(text.split("---\n", 2)[1])


def test_an_entry_as_markdown_has_frontmatter_heading_summary_and_credited_link(
    http, make_feed, make_entry, make_tag
):
    feed = make_feed(title="MacSajten")
    entry = make_entry(feed, title="Apple släpper iOS 19", tags=[make_tag("iOS")])

    response = http.get(f"/entries/{entry.pk}.md")

    assert response.status_code == 200
    assert response.headers["Content-Type"] == "text/markdown; charset=utf-8"
    assert response.headers["X-Robots-Tag"] == "noindex"
    assert "Set-Cookie" not in response.headers
    meta = _frontmatter(response.text)
    assert meta["id"] == entry.pk
    assert meta["source"] == "MacSajten"
    assert meta["tags"] == ["iOS"]
    assert meta["translated"] is True
    assert meta["language"] == "sv"
    assert "\n# Apple släpper iOS 19\n" in response.text
    assert entry.summary_translated in response.text
    assert f"]({entry.url}) (enligt MacSajten, via Nyhetstjänsten)" in response.text


def test_summary_lines_that_look_like_blocks_render_as_the_text_they_are(
    http, make_feed, make_entry
):
    entry = make_entry(
        make_feed(), summary_translated="1. lista\n\n12) punkt\n\n# Ingen rubrik\n\n- inget"
    )

    text = http.get(f"/entries/{entry.pk}.md").text

    # Escaped the CommonMark way (the punctuation, never the digits): a renderer shows the
    # paragraphs as written, with no list, heading or stray backslash.
    assert "\n1\\. lista\n" in text
    assert "\n12\\) punkt\n" in text
    rendered = markdown.markdown(text.split("---\n", 2)[2])
    for paragraph in ("1. lista", "12) punkt", "# Ingen rubrik", "- inget"):
        assert f"<p>{paragraph}</p>" in rendered
    assert "<ol>" not in rendered and "<h1>Ingen" not in rendered and "<ul>" not in rendered


def test_an_untranslated_entry_says_so(http, make_feed, make_entry):
    entry = make_entry(
        make_feed(),
        language="en",
        summary_translated="",
        summary_original="Apple shipped it.",
        summary_state=SummaryState.EXTRACTED,
    )

    text = http.get(f"/entries/{entry.pk}.md").text

    meta = _frontmatter(text)
    assert meta["translated"] is False
    # The text shown is the English excerpt: the language says so.
    assert meta["language"] == "en"
    assert "Ej översatt ännu" in text
    assert "Apple shipped it." in text


@pytest.mark.parametrize(
    ("accept", "markdown"),
    [
        ("text/markdown", True),
        ("text/markdown;q=0.9, text/html;q=0.8", True),
        ("text/html, text/markdown;q=0.5", False),
        ("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", False),
        ("*/*", False),
        ("text/markdown;q=0", False),
        ("text/markdown;q=abc", False),
    ],
)
def test_the_article_url_negotiates_by_accept_with_q_values(
    http, make_feed, make_entry, accept, markdown
):
    entry = make_entry(make_feed())

    response = http.get(f"/entries/{entry.pk}", headers={"Accept": accept})

    assert response.status_code == 200
    assert "Accept" in [part.strip() for part in response.headers["Vary"].split(",")]
    expected = "text/markdown; charset=utf-8" if markdown else "text/html; charset=utf-8"
    assert response.headers["Content-Type"] == expected


def test_index_md_lists_the_latest_50_relevant_entries_linking_to_their_markdown(
    http, make_feed, make_entry, served_queries
):
    feed = make_feed()
    entries = [make_entry(feed) for _ in range(55)]
    hidden = make_entry(feed, platform_relevant=False)

    response = http.get("/index.md")

    assert response.headers["X-Robots-Tag"] == "noindex"
    links = [line for line in response.text.splitlines() if line.startswith("- [")]
    assert len(links) == 50
    assert f"/entries/{hidden.pk}.md" not in response.text
    newest = max(entries, key=lambda e: (e.listed_at, e.pk))
    assert f"{http.base_url}/entries/{newest.pk}.md" in links[0]
    assert 0 < len(served_queries) <= 2


@pytest.mark.parametrize(
    "path", ["/entries/424242.md", "/entries/99999999999999999999.md", "/entries/x.md"]
)
def test_unknown_entries_are_404_in_html(http, path):
    response = http.get(path)

    assert response.status_code == 404
    assert response.headers["Content-Type"].startswith("text/html")
