"""Feed documents (RSS, Atom, podcast RSS) to plain values, with feedparser. No I/O here."""

import calendar
import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime

import feedparser

from news_site.news.text import html_links, html_to_text

_IMAGE_TYPES = re.compile(r"^image/", re.IGNORECASE)
_IMAGE_EXTENSIONS = re.compile(r"\.(jpe?g|png|gif|webp|avif)(\?|$)", re.IGNORECASE)


class UnreadableFeed(Exception):
    """The document is not a feed we can read anything from."""


@dataclass(frozen=True)
class ParsedItem:
    guid: str
    link: str
    title: str
    text: str
    author: str
    published_at: datetime | None
    image_url: str


@dataclass(frozen=True)
class ParsedEpisode:
    episode_id: str
    title: str
    description: str
    published_on: date | None
    duration_seconds: int | None
    page_url: str
    audio_url: str
    cover_url: str
    chapters_url: str
    transcript_url: str
    sources: list[dict[str, str]]


@dataclass(frozen=True)
class ParsedFeed:
    title: str
    site_url: str
    ttl_seconds: int | None
    items: list[ParsedItem] = field(default_factory=list)
    episodes: list[ParsedEpisode] = field(default_factory=list)
    cover_url: str = ""


def parse_feed(body: bytes, *, content_type: str = "") -> ParsedFeed:
    """Parse a fetched body. Raises UnreadableFeed when it holds no feed at all; a feed that
    is only slightly broken (feedparser's "bozo" with items) still yields its items."""
    headers = {"content-type": content_type} if content_type else {}
    try:
        document = feedparser.parse(body, response_headers=headers, sanitize_html=True)
    except Exception as exc:
        # feedparser's own bugs on hostile markup (found by fuzzing: ValueError from
        # `&#x110000;`, KeyError 'links' and AttributeError 'end_link' in its loose parser)
        # mean the document cannot be read, like any other unreadable feed.
        raise UnreadableFeed(f"not a readable feed: {type(exc).__name__}: {exc}"[:250]) from exc
    if document.bozo and not document.entries and not document.feed.get("title"):
        raise UnreadableFeed(f"not a readable feed: {_bozo_message(document)}")
    # An empty body gives a result without `version` at all.
    if not document.get("version") and not document.entries:
        raise UnreadableFeed("not an RSS or Atom document")
    meta = document.feed
    cover = (meta.get("image") or {}).get("href", "")
    return ParsedFeed(
        title=_clean(meta.get("title", "")),
        site_url=meta.get("link", ""),
        ttl_seconds=_ttl_seconds(meta.get("ttl")),
        items=[item for raw in document.entries if (item := _item(raw)) is not None],
        episodes=[ep for raw in document.entries if (ep := _episode(raw, cover)) is not None],
        cover_url=cover,
    )


def _bozo_message(document: feedparser.FeedParserDict) -> str:
    exception = document.get("bozo_exception")
    return str(exception)[:200] if exception else "unknown error"


def _clean(value: str) -> str:
    return " ".join(html_to_text(value).split())


def _ttl_seconds(raw: object) -> int | None:
    try:
        minutes = int(str(raw).strip())
    except ValueError:
        return None
    return minutes * 60 if minutes > 0 else None


def _datetime(raw: feedparser.FeedParserDict) -> datetime | None:
    parsed = raw.get("published_parsed") or raw.get("updated_parsed")
    if not parsed:
        return None
    return datetime.fromtimestamp(calendar.timegm(parsed), tz=UTC)


def _item(raw: feedparser.FeedParserDict) -> ParsedItem | None:
    link = raw.get("link") or ""  # an empty <link/> gives None
    if not link.startswith(("http://", "https://")):
        return None
    # The teaser the publisher syndicates; content:encoded is used only when it is missing.
    markup = raw.get("summary", "") or next(
        (c.get("value", "") for c in raw.get("content", [])), ""
    )
    return ParsedItem(
        guid=(raw.get("id") or "").strip(),
        link=link,
        title=_clean(raw.get("title", ""))[:500] or link,
        text=html_to_text(markup),
        author=_clean(raw.get("author", ""))[:200],
        published_at=_datetime(raw),
        image_url=_image(raw),
    )


def _image(raw: feedparser.FeedParserDict) -> str:
    for media in raw.get("media_content", []):
        url = media.get("url", "")
        if url and (media.get("medium") == "image" or _IMAGE_TYPES.match(media.get("type", ""))):
            return url
        if url and _IMAGE_EXTENSIONS.search(url) and not media.get("type"):
            return url
    for thumbnail in raw.get("media_thumbnail", []):
        if thumbnail.get("url"):
            return thumbnail["url"]
    for link in raw.get("links", []):
        if link.get("rel") == "enclosure" and _IMAGE_TYPES.match(link.get("type", "")):
            return link.get("href", "")
    image = raw.get("image") or {}
    return image.get("href", "") if isinstance(image, dict) else ""


def _duration_seconds(raw: object) -> int | None:
    """itunes:duration is seconds, MM:SS or HH:MM:SS."""
    text = str(raw or "").strip()
    if not text:
        return None
    try:
        seconds = 0
        for part in text.split(":"):
            seconds = seconds * 60 + int(float(part))
    except ValueError:
        return None
    return seconds if seconds >= 0 else None


def _episode(raw: feedparser.FeedParserDict, feed_cover: str) -> ParsedEpisode | None:
    audio = next(
        (
            link.get("href", "")
            for link in raw.get("links", [])
            if link.get("rel") == "enclosure" and link.get("type", "").startswith("audio/")
        ),
        "",
    )
    episode_id = (raw.get("id") or raw.get("link") or audio).strip()
    if not audio or not episode_id:
        return None
    published = _datetime(raw)
    description_markup = raw.get("summary", "")
    image = raw.get("image") or {}
    return ParsedEpisode(
        episode_id=episode_id[:200],
        title=_clean(raw.get("title", ""))[:300] or episode_id,
        description=html_to_text(description_markup),
        published_on=published.date() if published else None,
        duration_seconds=_duration_seconds(raw.get("itunes_duration")),
        page_url=raw.get("link", ""),
        audio_url=audio,
        cover_url=(image.get("href", "") if isinstance(image, dict) else "") or feed_cover,
        chapters_url=(raw.get("podcast_chapters") or {}).get("url", ""),
        transcript_url=(raw.get("podcast_transcript") or {}).get("url", ""),
        sources=[
            {"title": text or href, "url": href} for text, href in html_links(description_markup)
        ],
    )
