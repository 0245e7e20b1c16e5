"""The reader's home page at `/`: story cards, newest first, paged, and never two articles of
one story as two cards."""

import re
from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.news_factories import EntryFactory, FeedFactory, StoryFactory

pytestmark = pytest.mark.django_db

CARD_LINK = re.compile(r'<h2><a href="(/(?:entries|handelser)/\d+)">')


def card_links(html: str) -> list[str]:
    return CARD_LINK.findall(html)


def _at(minutes_ago: int):
    return timezone.now() - timedelta(minutes=minutes_ago)


def test_a_story_is_one_card_with_its_sources_and_lead(http):
    story = StoryFactory(
        title="Apple visar iPhone 18",
        lead="Tre källor om lanseringen.",
        entries_count=3,
        source_count=3,
    )
    for minutes in (5, 10, 15):
        EntryFactory(story=story, listed_at=_at(minutes), published_at=_at(minutes))
    alone = EntryFactory(title="Ensam artikel", listed_at=_at(1), published_at=_at(1))

    response = http.get("/")

    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("text/html")
    assert card_links(response.text) == [f"/entries/{alone.pk}", f"/handelser/{story.pk}"]
    assert "Apple visar iPhone 18" in response.text
    assert "Tre källor om lanseringen." in response.text
    assert "3 källor" in response.text
    assert "1 källa" in response.text


def test_the_home_page_is_a_public_page_without_script_or_cookie(http):
    EntryFactory()

    response = http.get("/")

    assert "public" in response.headers["Cache-Control"]
    assert "Set-Cookie" not in response.headers
    assert "<script" not in response.text
    assert '<html lang="sv">' in response.text
    # The search box is a GET form to this site, which the page's policy allows.
    assert 'action="/sok"' in response.text
    assert "form-action 'self'" in response.headers["Content-Security-Policy"]


def test_an_image_has_a_fallback_behind_it_and_a_bad_address_none(http):
    feed = FeedFactory(title="Macvärlden")
    EntryFactory(feed=feed, image_url="https://bilder.example/a.jpg", listed_at=_at(2))
    EntryFactory(feed=feed, image_url="javascript:alert(1)", listed_at=_at(1))

    html = http.get("/").text

    # The source's name is under the image: a picture that fails leaves it, never a gap.
    assert (
        '<div class="pic" aria-hidden="true">Macvärlden<img src="https://bilder.example/a.jpg"'
        in html
    )
    assert "javascript:" not in html


def test_pages_of_twelve_cards_link_each_other(http):
    for minutes in range(30):
        EntryFactory(listed_at=_at(minutes), published_at=_at(minutes))

    first, second, third = (http.get(f"/?sida={n}").text for n in (1, 2, 3))

    assert len(card_links(first)) == len(card_links(second)) == 12
    assert len(card_links(third)) == 6
    assert not set(card_links(first)) & set(card_links(second))
    assert 'href="?sida=2" rel="next"' in first
    assert 'href="?sida=1" rel="prev"' in second
    assert "Sida 3 av 3" in third
    assert http.get("/?sida=4").status_code == 404
    assert http.get("/?sida=x").status_code == 404


def test_agents_still_get_markdown_on_the_same_url(http):
    EntryFactory(title="För agenter")

    response = http.get("/", headers={"Accept": "text/markdown"})

    assert response.headers["Content-Type"] == "text/markdown; charset=utf-8"
    assert "För agenter" in response.text
    assert "Accept" in response.headers["Vary"]


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    assignment=st.lists(
        st.tuples(st.one_of(st.none(), st.integers(0, 3)), st.booleans()), min_size=1, max_size=14
    )
)
def test_no_story_is_ever_two_cards_and_cards_are_newest_first(http, assignment):
    """Any mix of entries in stories, outside them and not relevant (hidden): each story is one
    card at its newest public article's place, every story-less public entry is its own card."""
    with transaction.atomic():
        stories = [StoryFactory(entries_count=1, source_count=1) for _ in range(4)]
        expected: dict[str, object] = {}
        for minutes, (story_index, relevant) in enumerate(assignment):
            story = None if story_index is None else stories[story_index]
            entry = EntryFactory(story=story, platform_relevant=relevant, listed_at=_at(minutes))
            if not relevant:
                continue
            key = f"/handelser/{story.pk}" if story else f"/entries/{entry.pk}"
            # Entries are made newest first: a story's first public one is its newest.
            expected.setdefault(key, entry.listed_at)

        links = card_links(http.get("/").text)
        transaction.set_rollback(True)

    assert len(links) == len(set(links))
    assert links == list(expected)[:12]
