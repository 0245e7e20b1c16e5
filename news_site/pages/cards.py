"""The cards of the reader's lists: a story's card stands for all its articles, an article
without a story is its own card. Built from a page of stories.selectors.card_entries()."""

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from news_site.news.cleaning import clean_url
from news_site.news.models import Entry, Story
from news_site.stories.selectors import stories_by_id

# A lead longer than this is cut at a word on a card (the story or article page has it all).
LEAD_MAX = 280


@dataclass(frozen=True)
class Card:
    title: str
    lead: str
    url: str
    # The source's image ("" when there is none or its address is unusable).
    image_url: str
    # Who reported it: the newest article's source, and how many sources in all.
    source: str
    source_count: int
    when: datetime | None


def _lead(text: str) -> str:
    text = " ".join(text.split())
    if len(text) <= LEAD_MAX:
        return text
    return text[:LEAD_MAX].rsplit(" ", 1)[0].rstrip(",.;:") + " …"


def entry_card(entry: Entry) -> Card:
    return Card(
        title=entry.title,
        lead=_lead(entry.swedish_summary),
        url=f"/entries/{entry.pk}",
        image_url=clean_url(entry.image_url) or "",
        source=entry.feed.title,
        source_count=1,
        when=entry.published_at or entry.listed_at,
    )


def story_card(story: Story, newest: Entry) -> Card:
    return Card(
        title=story.title or newest.title,
        lead=_lead(story.lead or newest.swedish_summary),
        url=f"/handelser/{story.pk}",
        image_url=clean_url(story.image_url or newest.image_url) or "",
        source=newest.feed.title,
        source_count=max(story.source_count, 1),
        when=newest.published_at or newest.listed_at,
    )


def cards(entries: Iterable[Entry]) -> list[Card]:
    """The cards of these card entries, in their order (one query for their stories)."""
    entries = list(entries)
    stories = stories_by_id(story_ids=[e.story_id for e in entries if e.story_id is not None])
    return [
        story_card(stories[e.story_id], e) if e.story_id in stories else entry_card(e)
        for e in entries
    ]
