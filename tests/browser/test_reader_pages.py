"""A reader on a phone (390x844) on the quick start's demo: the home page of story cards, its
pages, a story, an article, a guide and the search box; no script needed. Screenshots of each
go to var/screenshots/reader-*.png."""

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.browser.conftest import QuickStart

pytestmark = pytest.mark.embedded_only

SHOTS = Path(__file__).resolve().parents[2] / "var" / "screenshots"
PHONE = {"width": 390, "height": 844}


@pytest.fixture
def phone(browser) -> Iterator[object]:
    """A phone-sized page with JavaScript off: every reader's page works without it."""
    context = browser.new_context(viewport=PHONE, java_script_enabled=False, is_mobile=True)
    context.set_default_timeout(20_000)
    page = context.new_page()
    yield page
    context.close()


def _shot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"reader-{name}.png"), full_page=True)


def _follow(page, link) -> None:
    """Click a link or button and wait for the page it opens to finish loading: a click returns
    once the navigation commits, when the new page's cards may not be parsed yet."""
    link.click()
    page.wait_for_load_state("load")


def _fits_the_screen(page) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"the page is {width}px wide on a {PHONE['width']}px screen"


def _card_links(page) -> list[str]:
    return [urlsplit(a.get_attribute("href")).path for a in page.locator(".card h2 a").all()]


def test_the_home_page_shows_story_cards_once_each(quickstart: QuickStart, phone) -> None:
    phone.goto(quickstart.news + "/")

    links = _card_links(phone)
    assert len(links) == 12
    assert len(links) == len(set(links)), "a story or an article shows twice"
    assert any(link.startswith("/handelser/") for link in links)
    assert phone.locator(".card .pill", has_text=re.compile(r"^[2-9]\d* källor$")).count()
    # Every card has a Swedish lead.
    assert all(text.strip() for text in phone.locator(".card h2 + p").all_inner_texts())
    # The demo's images do not load here: each card keeps its box with the source's name.
    first = phone.locator(".card .pic").first
    assert first.bounding_box()["height"] > 150
    assert first.inner_text().strip()
    footer = phone.locator("footer")
    for link in ("/llms.txt", "/index.md", "/entries.rss"):
        assert footer.locator(f'a[href="{link}"]').count() == 1
    _fits_the_screen(phone)
    _shot(phone, "home")


def test_paging_goes_to_older_cards_and_back(quickstart: QuickStart, phone) -> None:
    phone.goto(quickstart.news + "/")
    first_page = _card_links(phone)

    _follow(phone, phone.get_by_role("link", name="Äldre →"))

    assert urlsplit(phone.url).query == "sida=2"
    second_page = _card_links(phone)
    assert second_page and not set(first_page) & set(second_page)
    _fits_the_screen(phone)
    _shot(phone, "home-page-2")
    _follow(phone, phone.get_by_role("link", name="← Nyare"))
    assert _card_links(phone) == first_page


def test_a_story_card_opens_the_story_and_its_articles(quickstart: QuickStart, phone) -> None:
    phone.goto(quickstart.news + "/")
    story_link = phone.locator('.card h2 a[href^="/handelser/"]').first
    title = story_link.inner_text()

    _follow(phone, story_link)

    assert phone.locator("h1").inner_text() == title
    articles = phone.locator(".card h2 a")
    assert articles.count() >= 2
    _fits_the_screen(phone)
    _shot(phone, "story")
    _follow(phone, articles.first)
    assert urlsplit(phone.url).path.startswith("/entries/")
    assert phone.get_by_role("link", name=title).count() == 1


def test_an_article_page_has_the_summary_and_the_way_to_the_original(
    quickstart: QuickStart, phone
) -> None:
    phone.goto(quickstart.news + "/")
    _follow(phone, phone.locator('.card h2 a[href^="/handelser/"]').first)
    _follow(phone, phone.locator('.card h2 a[href^="/entries/"]').first)

    article = phone.locator("article")
    assert article.locator("h1").inner_text().strip()
    original = phone.locator("a.out")
    assert original.inner_text().startswith("Läs hela artikeln hos ")
    assert urlsplit(original.get_attribute("href")).scheme == "https"
    assert len(article.locator("p.summary").inner_text().strip()) > 20
    _fits_the_screen(phone)
    _shot(phone, "article")


def test_a_guide_is_a_page_of_its_own(quickstart: QuickStart, phone) -> None:
    phone.goto(quickstart.news + "/guider")
    guide = phone.locator("main li a").first
    title = guide.inner_text()

    _follow(phone, guide)

    assert phone.locator("h1").inner_text() == title
    assert phone.locator("article h2").count() >= 1
    _fits_the_screen(phone)
    _shot(phone, "guide")
    assert phone.request.get(quickstart.news + "/iphone-18-rykten").status == 200


def test_the_search_box_finds_articles(quickstart: QuickStart, phone) -> None:
    phone.goto(quickstart.news + "/")

    phone.get_by_role("searchbox", name="Sök bland nyheterna").fill("AirPods")
    _follow(phone, phone.get_by_role("button", name="Sök"))

    assert urlsplit(phone.url).path == "/sok"
    assert phone.locator("h1").inner_text() == "Sökning: AirPods"
    results = phone.locator(".card h2 a")
    assert results.count() >= 1
    assert any("AirPods" in text for text in results.all_inner_texts())
    _fits_the_screen(phone)
    _shot(phone, "search")
