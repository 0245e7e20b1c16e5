"""The reader's other pages: a story, an article, guides, podcast episodes, tags, sources and
the search box."""

import pytest

from news_site.news.models import GuidePageType
from tests.support.news_factories import (
    EntryFactory,
    EpisodeFactory,
    FeedFactory,
    GuideFactory,
    StoryFactory,
    TagFactory,
)

pytestmark = pytest.mark.django_db


def test_a_story_page_lists_its_articles_newest_first(http):
    story = StoryFactory(
        title="Vision Pro i Sverige",
        lead="Ingressen.",
        body="Brödtext.",
        entries_count=2,
        source_count=2,
    )
    older = EntryFactory(story=story, title="Första rapporten")
    newer = EntryFactory(
        story=story,
        title="Senare rapport",
        listed_at=older.listed_at.replace(year=older.listed_at.year + 1),
    )
    EntryFactory(story=story, title="Dold", platform_relevant=False)

    response = http.get(f"/handelser/{story.pk}")

    assert response.status_code == 200
    assert "<h1>Vision Pro i Sverige</h1>" in response.text
    assert "Ingressen." in response.text and "Brödtext." in response.text
    assert response.text.index(f"/entries/{newer.pk}") < response.text.index(f"/entries/{older.pk}")
    assert "Dold" not in response.text
    assert "public" in response.headers["Cache-Control"]
    # A readable address with the slug works too; an empty story is gone.
    assert http.get(f"/handelser/{story.pk}-vision-pro").status_code == 200
    assert http.get(f"/handelser/{StoryFactory(entries_count=0).pk}").status_code == 404


def test_an_article_page_has_the_swedish_summary_and_links_out(http):
    feed = FeedFactory(title="9to5Mac")
    story = StoryFactory(title="Händelsen", entries_count=1)
    tag = TagFactory(name="iPhone", slug="iphone")
    entry = EntryFactory(
        feed=feed,
        story=story,
        title="iPhone 18 Pro får ny kamera",
        url="https://9to5mac.example/iphone-18",
        summary_translated="Apple ger iPhone 18 Pro en ny kamera, enligt uppgifter.",
        summary_original="Apple gives the iPhone 18 Pro a new camera.",
        tags=[tag],
    )

    html = http.get(f"/entries/{entry.pk}").text

    assert "Apple ger iPhone 18 Pro en ny kamera" in html
    assert "Apple gives the iPhone" not in html
    assert (
        'href="https://9to5mac.example/iphone-18" rel="noopener">Läs hela artikeln hos 9to5Mac'
        in html
    )
    assert f'href="/handelser/{story.pk}"' in html
    assert 'href="/taggar/iphone"' in html
    assert f'href="/kallor/{feed.pk}"' in html


def test_an_article_with_an_unusable_address_gets_no_link(http):
    entry = EntryFactory(url="javascript:alert(1)")

    html = http.get(f"/entries/{entry.pk}").text

    assert "javascript:" not in html
    assert "Läs hela artikeln" not in html


def test_guides_are_listed_and_have_pages_with_their_markdown_as_html(http):
    GuideFactory(
        slug="iphone-18-rykten",
        title="iPhone 18: rykten",
        page_type=GuidePageType.RUMOR,
        body="## Kamera\n\n- Större sensor\n\n[Index](/index.md) och [x](javascript:alert(1))\n\n"
        "<script>alert(1)</script>",
    )
    GuideFactory(slug="dold", title="Dold guide", is_published=False)

    listing = http.get("/guider").text
    page = http.get("/iphone-18-rykten")

    assert 'href="/iphone-18-rykten"' in listing and "Rykten" in listing
    assert "Dold guide" not in listing
    assert page.status_code == 200
    assert "<h2>Kamera</h2>" in page.text and "<li>Större sensor</li>" in page.text
    assert '<a href="/index.md">Index</a>' in page.text
    assert "<script>" not in page.text and "&lt;script&gt;" in page.text
    assert 'href="javascript:' not in page.text
    assert http.get("/dold").status_code == 404
    # The markdown beside it is unchanged.
    assert http.get("/iphone-18-rykten.md").headers["Content-Type"].startswith("text/markdown")


def test_podcast_episodes_have_a_list_and_pages(http):
    episode = EpisodeFactory(
        episode_id="avsnitt-12",
        title="Avsnitt 12: WWDC",
        description="Vi pratar om WWDC.",
        audio_url="https://example.com/podd/12.mp3",
        duration_seconds=3000,
    )

    listing = http.get("/podd").text
    page = http.get(f"/podd/{episode.episode_id}").text

    assert 'href="/podd/avsnitt-12"' in listing
    assert "Vi pratar om WWDC." in page
    assert 'href="https://example.com/podd/12.mp3"' in page and "50 min" in page
    assert http.get("/podd/finns-inte").status_code == 404


def test_tags_and_sources_list_their_articles(http):
    tag = TagFactory(name="AirPods", slug="airpods")
    feed = FeedFactory(title="Feber")
    tagged = EntryFactory(feed=feed, tags=[tag], title="Nya AirPods")
    EntryFactory(title="Annat")

    tags = http.get("/taggar").text
    by_tag = http.get("/taggar/airpods").text
    sources = http.get("/kallor").text
    by_source = http.get(f"/kallor/{feed.pk}").text

    assert 'href="/taggar/airpods"' in tags and "(1)" in tags
    assert f"/entries/{tagged.pk}" in by_tag and "Annat" not in by_tag
    assert f'href="/kallor/{feed.pk}"' in sources and "1 artiklar" in sources
    assert f"/entries/{tagged.pk}" in by_source and "Annat" not in by_source
    assert http.get("/taggar/okand").status_code == 404
    assert http.get("/kallor/999999").status_code == 404


@pytest.mark.usefixtures("keyword_only")
def test_the_search_box_finds_what_the_api_finds(http):
    found = EntryFactory(
        title="Vision Pro säljs i Sverige", summary_translated="Vision Pro i Sverige."
    )
    EntryFactory(title="Något helt annat", summary_translated="Om annat.")

    page = http.get("/sok", params={"q": "Vision Pro"})
    api = http.get("/api/v1/entries/search", params={"q": "Vision Pro"}).json()

    assert page.status_code == 200
    assert f"/entries/{found.pk}" in page.text and "Något helt annat" not in page.text
    assert [item["id"] for item in api["data"]] == [found.pk]
    assert 'value="Vision Pro"' in page.text
    assert "Skriv några ord" in http.get("/sok").text
    assert "Inga artiklar hittades" in http.get("/sok", params={"q": "zzzz"}).text


@pytest.mark.usefixtures("keyword_only")
def test_searches_over_the_limit_are_refused_with_a_page(http, settings):
    settings.NEWS_SEARCH_RATE_LIMIT = "2/m"
    EntryFactory()

    answers = [http.get("/sok", params={"q": f"ord{n}"}).status_code for n in range(3)]

    assert answers == [200, 200, 429]


@pytest.mark.parametrize("path", ["/", "/guider", "/podd", "/taggar", "/kallor", "/sok"])
def test_every_page_has_the_agents_links_in_its_footer(http, path):
    html = http.get(path).text

    footer = html[html.index("<footer") :]
    for link in ("/llms.txt", "/index.md", "/entries.rss", "/api/v1/docs"):
        assert f'href="{link}"' in footer
    assert "llms.txt" not in html[: html.index("<footer")]
