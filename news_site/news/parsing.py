"""Feed documents (RSS, Atom, podcast RSS) to plain values, with feedparser. No I/O here."""

import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from urllib.parse import urljoin

import feedparser

from news_site.news.cleaning import clean_datetime, clean_int, clean_text, clean_url
from news_site.news.text import html_links, html_to_text

# The longest podcast episode we believe (a week of audio); longer is a typo or an attack.
MAX_DURATION_SECONDS = 7 * 24 * 3600

_IMAGE_TYPES = re.compile(r"^image/", re.IGNORECASE)
_IMAGE_EXTENSIONS = re.compile(r"\.(jpe?g|png|gif|webp|avif)(\?|$)", re.IGNORECASE)


# An item's teaser, content or show notes handed to the HTML parser is cut here: we keep an
# excerpt and a fingerprint of it, never the whole text.
ITEM_MARKUP_CHARS = 200_000
# Feed markup handed to feedparser is cut here (the fetch cap is lower in production).
MAX_FEED_BYTES = 20 * 1024 * 1024


# A numeric character reference, decimal or hex, as bytes (feeds come as bytes in an
# ASCII-compatible encoding; the few in UTF-16 have no references feedparser would choke on).
_CHARACTER_REFERENCE = re.compile(rb"&#(?:[xX]([0-9a-fA-F]{1,8})|([0-9]{1,10}));")
# A surrogate encoded as if it were a character (CESU-8, or UTF-8 written with "surrogatepass"):
# a high one followed by a low one is a character outside the BMP; either alone is nothing.
_ENCODED_SURROGATE_PAIR = re.compile(
    rb"\xed([\xa0-\xaf])([\x80-\xbf])\xed([\xb0-\xbf])([\x80-\xbf])"
)
_ENCODED_SURROGATE = re.compile(rb"\xed[\xa0-\xbf][\x80-\xbf]")
_HIGH_SURROGATES = range(0xD800, 0xDC00)
_LOW_SURROGATES = range(0xDC00, 0xE000)


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
    guid: str
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
    # Items left out because they had no usable http(s) link (counted, logged by the caller).
    items_without_link: int = 0


def parse_feed(
    body: bytes,
    *,
    content_type: str = "",
    base_url: str = "",
    content_location: str = "",
    now: datetime | None = None,
) -> ParsedFeed:
    """Parse a fetched body. Raises UnreadableFeed when it holds no feed at all; a feed that
    is only slightly broken (feedparser's "bozo" with items) still yields its items.

    `base_url` is the document's final URL (after redirects) and `content_location` its
    Content-Location header: relative links resolve against them. Every value passes the
    cleaning step (news.cleaning) before it leaves this function."""
    now = now or datetime.now(tz=UTC)
    base = urljoin(base_url, clean_text(content_location).strip()) if base_url else ""
    headers = {"content-type": content_type} if content_type else {}
    if base:
        headers["content-location"] = base
    try:
        # feedparser's sanitizer and relative-URI resolver (sgmllib) are quadratic on hostile
        # markup; we never publish feed HTML (html_to_text reads it), so both are off.
        document = feedparser.parse(
            without_surrogate_references(without_encoded_surrogates(body[:MAX_FEED_BYTES])),
            response_headers=headers,
            sanitize_html=False,
            resolve_relative_uris=False,
        )
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
    image = meta.get("image") or {}
    cover = clean_url(image.get("href", "") if isinstance(image, dict) else "", base=base)
    items = [_item(raw, base=base, now=now) for raw in document.entries]
    return ParsedFeed(
        title=_clean(meta.get("title", ""))[:200],
        site_url=clean_url(meta.get("link", ""), base=base),
        ttl_seconds=_ttl_seconds(meta.get("ttl")),
        items=[item for item in items if item is not None],
        episodes=[
            ep
            for raw in document.entries
            if (ep := _episode(raw, cover, base=base, now=now)) is not None
        ],
        cover_url=cover,
        items_without_link=sum(1 for item in items if item is None),
    )


def without_surrogate_references(body: bytes) -> bytes:
    """`body` with its surrogate character references resolved before any parser sees them:
    a pair (`&#55357;&#56832;`, as some CMSs write an emoji) becomes the one reference of the
    character it encodes (`&#x1F600;`), a lone one (`&#xD800;`) is removed. feedparser raises
    on either, which would lose every item of the document for one bad character."""
    if b"&#" not in body:
        return body
    skip_until = -1

    def resolve(match: re.Match[bytes]) -> bytes:
        nonlocal skip_until
        if match.start() < skip_until:
            return b""
        code = _reference_value(match)
        if code not in _HIGH_SURROGATES and code not in _LOW_SURROGATES:
            return match.group()
        following = _CHARACTER_REFERENCE.match(body, match.end())
        low = _reference_value(following) if following else 0
        if following and code in _HIGH_SURROGATES and low in _LOW_SURROGATES:
            skip_until = following.end()
            return b"&#x%X;" % (0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00))
        return b""

    return _CHARACTER_REFERENCE.sub(resolve, body)


def without_encoded_surrogates(body: bytes) -> bytes:
    """A UTF-8 document with surrogates encoded as characters, as valid UTF-8: a pair becomes
    the character it encodes, a lone one is removed. Otherwise feedparser finds the document is
    not UTF-8 and reads all of it in another encoding, garbling every item. Documents that are
    not UTF-8 but for those bytes (a windows-1252 feed) are left as they are."""
    if b"\xed" not in body:
        return body
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        fixed = _ENCODED_SURROGATE.sub(b"", _ENCODED_SURROGATE_PAIR.sub(_joined_pair, body))
        try:
            fixed.decode("utf-8")
        except UnicodeDecodeError:
            return body
        return fixed
    return body


def _joined_pair(match: re.Match[bytes]) -> bytes:
    high = 0xD000 | (match[1][0] & 0x3F) << 6 | (match[2][0] & 0x3F)
    low = 0xD000 | (match[3][0] & 0x3F) << 6 | (match[4][0] & 0x3F)
    return chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)).encode("utf-8")


def _reference_value(match: re.Match[bytes]) -> int:
    hexadecimal, decimal = match.groups()
    return int(hexadecimal, 16) if hexadecimal else int(decimal)


def _bozo_message(document: feedparser.FeedParserDict) -> str:
    exception = document.get("bozo_exception")
    return str(exception)[:200] if exception else "unknown error"


def _clean(value: object) -> str:
    return " ".join(html_to_text(clean_text(value)[:ITEM_MARKUP_CHARS]).split())


def _ttl_seconds(raw: object) -> int | None:
    minutes = clean_int(str(raw).strip(), low=1, high=7 * 24 * 60)
    return minutes * 60 if minutes else None


def _datetime(raw: feedparser.FeedParserDict, *, now: datetime) -> datetime | None:
    # feedparser gives UTC struct_times whose year may be 0 or 10000 after the offset. The keys
    # are read as stored: feedparser's own `get` answers a missing updated_parsed with
    # published_parsed (already tried) and a DeprecationWarning.
    for key in ("published_parsed", "updated_parsed"):
        if moment := clean_datetime(dict.get(raw, key), now=now):
            return moment
    return None


def _item(raw: feedparser.FeedParserDict, *, base: str, now: datetime) -> ParsedItem | None:
    # An empty <link/> gives None; javascript:, data: and unresolvable links give "".
    link = clean_url(raw.get("link") or "", base=base)
    if not link:
        return None
    # The teaser the publisher syndicates; content:encoded is used only when it is missing.
    markup = raw.get("summary", "") or next(
        (c.get("value", "") for c in raw.get("content", [])), ""
    )
    return ParsedItem(
        guid=clean_text(raw.get("id") or "").strip(),
        link=link,
        title=_clean(raw.get("title", ""))[:500] or link[:500],
        text=clean_text(html_to_text(clean_text(markup[:ITEM_MARKUP_CHARS]))),
        author=_clean(raw.get("author", ""))[:200],
        published_at=_datetime(raw, now=now),
        image_url=clean_url(_image(raw), base=base),
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
    """itunes:duration is seconds, MM:SS or HH:MM:SS; 1e400, NaN or a year of audio is None."""
    text = clean_text(raw).strip()
    if not text or len(text) > 40:
        return None
    seconds = 0
    for part in text.split(":"):
        value = clean_int(part.strip(), high=MAX_DURATION_SECONDS)
        if value is None:
            return None
        seconds = seconds * 60 + value
    return seconds if seconds <= MAX_DURATION_SECONDS else None


def _episode(
    raw: feedparser.FeedParserDict, feed_cover: str, *, base: str, now: datetime
) -> ParsedEpisode | None:
    audio = next(
        (
            clean_url(link.get("href", ""), base=base)
            for link in raw.get("links", [])
            if link.get("rel") == "enclosure" and link.get("type", "").startswith("audio/")
        ),
        "",
    )
    guid = clean_text(raw.get("id") or raw.get("link") or audio).strip()
    if not audio or not guid:
        return None
    published = _datetime(raw, now=now)
    description_markup = clean_text(raw.get("summary", "")[:ITEM_MARKUP_CHARS])
    image = raw.get("image") or {}
    chapters = raw.get("podcast_chapters") or {}
    transcript = raw.get("podcast_transcript") or {}
    return ParsedEpisode(
        guid=guid[:200],
        title=_clean(raw.get("title", ""))[:300] or guid[:300],
        description=html_to_text(description_markup),
        published_on=published.date() if published else None,
        duration_seconds=_duration_seconds(raw.get("itunes_duration")),
        page_url=clean_url(raw.get("link", ""), base=base),
        audio_url=audio,
        cover_url=clean_url(image.get("href", "") if isinstance(image, dict) else "", base=base)
        or feed_cover,
        chapters_url=clean_url(
            chapters.get("url", "") if isinstance(chapters, dict) else "", base=base
        ),
        transcript_url=clean_url(
            transcript.get("url", "") if isinstance(transcript, dict) else "", base=base
        ),
        sources=[
            {"title": clean_text(text or url, max_length=300), "url": url}
            for text, href in html_links(description_markup)
            if (url := clean_url(href, base=base))
        ],
    )
