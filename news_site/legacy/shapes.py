"""The legacy JSON shapes, exactly the fields of the interface document."""

from datetime import datetime
from typing import TypedDict

from news_site.news.cleaning import clean_url
from news_site.news.models import Entry, Feed, Tag
from news_site.news.swedish import relative_time


class LegacyEntry(TypedDict):
    id: int
    title: str
    url: str
    image: str
    summary: str
    source: str
    source_id: int
    posted: str | None
    published_at: str | None


class LegacyFeed(TypedDict):
    id: int
    title: str


class LegacyTag(TypedDict):
    id: int
    name: str


def legacy_entry(entry: Entry, *, now: datetime) -> LegacyEntry:
    return {
        "id": entry.pk,
        "title": entry.title,
        # Escaped at output too: rows may predate the cleaning migration.
        "url": clean_url(entry.url),
        "image": clean_url(entry.image_url),
        "summary": entry.swedish_summary,
        "source": entry.feed.title,
        "source_id": entry.feed_id,
        "posted": relative_time(entry.published_at, now=now) if entry.published_at else None,
        "published_at": entry.published_at.isoformat() if entry.published_at else None,
    }


def legacy_feed(feed: Feed) -> LegacyFeed:
    return {"id": feed.pk, "title": feed.title}


def legacy_tag(tag: Tag) -> LegacyTag:
    return {"id": tag.pk, "name": tag.name}
