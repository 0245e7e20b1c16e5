"""Writes of the news service: registering sources, the feeds and summaries steps, editor actions.

The pipeline is fetch -> parse -> upsert -> summarise, one feed and one entry at a time, so one
broken source or one failed summary never stops the others. Overlapping runs (the periodic task
and an operator's `ingest`) are safe: a feed is claimed by a compare-and-set on its
`next_check_at`, an entry by a short lease, so no two runs work on the same item.
"""

import hashlib
import logging
import random
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Protocol

from django.conf import settings
from django.core.cache import caches
from django.db import DatabaseError, IntegrityError, transaction
from django.db.models import F, Q
from django.utils import timezone
from django.utils.text import slugify

from news_site.news import selectors
from news_site.news.articles import article_read
from news_site.news.cleaning import clean_text, clean_url
from news_site.news.models import (
    Entry,
    EntryView,
    Feed,
    FeedKind,
    FetchOutcome,
    SummaryState,
    Tag,
)
from news_site.news.parsing import ParsedEpisode, ParsedFeed, ParsedItem, UnreadableFeed, parse_feed
from news_site.news.summarise import (
    BudgetExhausted,
    ChatModel,
    ModelUnavailable,
    SummaryError,
    summarise_offline,
)
from news_site.news.text import canonical_url, fingerprint, sha256
from shared import cache as shared_cache
from shared.fetch import FetchError, FetchResult, fetch

logger = logging.getLogger(__name__)

FEED_ACCEPT = (
    "application/rss+xml, application/atom+xml, application/xml;q=0.9, text/xml;q=0.9, */*;q=0.1"
)
_HTML_ACCEPT = "text/html, application/xhtml+xml;q=0.9"
# Content types that are certainly not a feed; anything else is given to the parser.
_NOT_FEED_TYPES = ("text/html", "image/", "audio/", "video/", "application/pdf", "font/")
_CLAIM_LEASE = timedelta(minutes=10)
URL_MAX_LENGTH = 2000
_WEEK = timedelta(days=7)


class Fetcher(Protocol):
    def __call__(
        self, url: str, *, headers: dict[str, str], max_bytes: int | None = None
    ) -> FetchResult: ...


def http_fetch(url: str, *, headers: dict[str, str], max_bytes: int | None = None) -> FetchResult:
    """The production fetcher: shared.fetch with the service's User-Agent, deadline and cap."""
    return fetch(
        url,
        user_agent=settings.NEWS_FETCH_USER_AGENT,
        timeout=settings.NEWS_FETCH_TIMEOUT_SECONDS,
        max_bytes=max_bytes or settings.NEWS_FETCH_MAX_BYTES,
        headers=headers,
    )


class EpisodesStore(Protocol):
    """Stores a podcast feed's parsed episodes, returning how many were new. The podcasts app
    provides it (the ingest passes it in), so this core app knows nothing of podcasts."""

    def __call__(self, feed: Feed, episodes: list[ParsedEpisode], *, fetcher: Fetcher) -> int: ...


class Progress(Protocol):
    def start(self, label: str, total: int) -> None: ...

    def advance(self) -> None: ...


class _NoProgress:
    def start(self, label: str, total: int) -> None:
        pass

    def advance(self) -> None:
        pass


@dataclass
class FeedsReport:
    """What the feeds step did: fetch every due feed and store its entries and episodes."""

    feeds_fetched: int = 0
    feeds_not_modified: int = 0
    feeds_failed: int = 0
    entries_new: int = 0
    episodes_new: int = 0
    # Items left out: no usable http(s) link, or refused by the database (recorded on the feed).
    items_skipped: int = 0


@dataclass
class SummaryReport:
    """What the summaries step did."""

    entries_summarised: int = 0
    summaries_failed: int = 0


@dataclass(frozen=True)
class FeedRefresh:
    outcome: FetchOutcome
    entries_new: int = 0
    episodes_new: int = 0
    items_skipped: int = 0


def content_changed() -> None:
    """What the public lists show may have changed: no process uses a page rendered before
    (selectors.content_generation). This process sees it at once, the others within
    selectors.CONTENT_GENERATION_SECONDS."""
    shared_cache.generation_changed(selectors.CONTENT_GENERATION_KEY)
    caches["process"].delete(selectors.CONTENT_GENERATION_KEY)
    if transaction.get_connection().in_atomic_block:
        transaction.on_commit(lambda: caches["process"].delete(selectors.CONTENT_GENERATION_KEY))


# Sources


def feed_add(
    *, url: str, title: str = "", language: str = "en", kind: str = FeedKind.ARTICLES
) -> tuple[Feed, bool]:
    """Register a source (idempotent by URL). The first fetch fills an empty title.
    Raises ValueError for a URL that is not an absolute http(s) URL fitting the column."""
    cleaned = clean_url(url)
    if not cleaned or cleaned != url.strip():
        raise ValueError(
            f"not an absolute http(s) URL of at most {URL_MAX_LENGTH} characters "
            "without control characters"
        )
    # The URL stands in for the title until the first fetch; the title column is shorter.
    feed, created = Feed.objects.get_or_create(
        url=cleaned,
        defaults={
            "title": clean_text(title or cleaned, max_length=200),
            "language": clean_text(language, max_length=12) or "en",
            "kind": kind,
        },
    )
    if created:
        content_changed()
    return feed, created


# The ingest steps of this app (news_site.ingest runs them in order)


def feeds_refresh_due(
    *,
    store_episodes: EpisodesStore,
    fetcher: Fetcher = http_fetch,
    progress: Progress | None = None,
) -> FeedsReport:
    """The feeds step: every due feed, each claimed so overlapping runs never share one."""
    report = FeedsReport()
    progress = progress or _NoProgress()
    now = timezone.now()
    due = list(selectors.feeds_due(now=now))
    progress.start("feeds", len(due))
    for feed in due:
        if feed_claim(feed=feed, now=now):
            refresh = feed_refresh(feed=feed, fetcher=fetcher, store_episodes=store_episodes)
            if refresh.outcome == FetchOutcome.FAILED:
                report.feeds_failed += 1
            elif refresh.outcome == FetchOutcome.OK:
                report.feeds_fetched += 1
            else:
                report.feeds_not_modified += 1
            report.entries_new += refresh.entries_new
            report.episodes_new += refresh.episodes_new
            report.items_skipped += refresh.items_skipped
        progress.advance()
    return report


def feed_claim(*, feed: Feed, now: datetime) -> bool:
    """Take `feed` for this run: moves its next check past the lease only if nobody else did."""
    claimed = Feed.objects.filter(pk=feed.pk, next_check_at=feed.next_check_at).update(
        next_check_at=now + _CLAIM_LEASE
    )
    return claimed == 1


def feed_refresh(
    *, feed: Feed, fetcher: Fetcher = http_fetch, store_episodes: EpisodesStore | None = None
) -> FeedRefresh:
    """Fetch and store one feed. Never raises for anything the source does wrong; a podcast
    feed needs `store_episodes` (a caller's mistake, raised before anything is fetched)."""
    if feed.kind == FeedKind.PODCAST and store_episodes is None:
        raise ValueError(f"feed {feed.pk} is a podcast feed: pass store_episodes")
    now = timezone.now()
    headers = {"Accept": FEED_ACCEPT}
    if feed.etag:
        headers["If-None-Match"] = feed.etag
    if feed.last_modified:
        headers["If-Modified-Since"] = feed.last_modified
    try:
        result = fetcher(feed.url, headers=headers)
    except FetchError as exc:
        return _feed_failed(feed, now=now, error=f"{exc.code}: {exc.message}")
    if result.status_code == 304:
        return _feed_unchanged(feed, now=now, result=result, outcome=FetchOutcome.NOT_MODIFIED)
    if result.status_code != 200:
        return _feed_failed(
            feed,
            now=now,
            error=f"HTTP {result.status_code}",
            status=result.status_code,
            retry_after=_retry_after_seconds(result.headers.get("Retry-After", ""), now=now),
        )
    content_type = result.headers.get("Content-Type", "").lower()
    if content_type.startswith(_NOT_FEED_TYPES):
        return _feed_failed(
            feed, now=now, error=f"not a feed: Content-Type {content_type[:80]}", status=200
        )
    body_hash = hashlib.sha256(result.body).hexdigest()
    if body_hash == feed.body_hash:
        return _feed_unchanged(feed, now=now, result=result, outcome=FetchOutcome.UNCHANGED)
    try:
        parsed = parse_feed(
            result.body,
            content_type=content_type,
            base_url=result.url or feed.url,
            content_location=result.headers.get("Content-Location", ""),
            now=now,
        )
    except UnreadableFeed as exc:
        return _feed_failed(feed, now=now, error=str(exc), status=200)
    try:
        with transaction.atomic():
            failed: list[str] = []
            if feed.kind == FeedKind.PODCAST:
                new_entries = 0
                new_episodes = store_episodes(feed, parsed.episodes, fetcher=fetcher)
            else:
                new_entries, failed = _items_store(feed, parsed.items, now=now)
                new_episodes = 0
            _feed_succeeded(feed, now=now, result=result, parsed=parsed, body_hash=body_hash)
    except Exception as exc:
        # Whatever this document does to our code, it stops this feed only: the failure is
        # recorded on the feed (backed off, paused after days) and the run goes on.
        logger.exception("feed %s: storing its document failed", feed.pk)
        # Drop what _feed_succeeded set in memory (body hash, validators): the next try
        # fetches and parses the document again, after the backoff.
        feed.refresh_from_db()
        return _feed_failed(
            feed, now=now, error=f"storing failed: {type(exc).__name__}: {exc}", status=200
        )
    skipped = failed
    if parsed.items_without_link:
        skipped = [
            f"{parsed.items_without_link} items without a usable http(s) link "
            "(missing, not http(s), or too long)",
            *failed,
        ]
    if skipped:
        # Shown to editors on the feed; the feed itself is healthy.
        note = "skipped: " + "; ".join(skipped)
        logger.warning("feed %s %s", feed.pk, note)
        Feed.objects.filter(pk=feed.pk).update(last_error=note[:1000])
    return FeedRefresh(
        FetchOutcome.OK,
        new_entries,
        new_episodes,
        items_skipped=parsed.items_without_link + len(failed),
    )


def _feed_succeeded(
    feed: Feed, *, now: datetime, result: FetchResult, parsed: ParsedFeed, body_hash: str
) -> None:
    moved_to = result.permanent_redirect_url
    # Only a permanent redirect moves the source, and only to an address no other feed has.
    if moved_to and moved_to != feed.url and not Feed.objects.filter(url=moved_to).exists():
        feed.url = moved_to
    if feed.title == feed.url and parsed.title:
        feed.title = parsed.title[:200]
    if not feed.site_url and parsed.site_url.startswith(("http://", "https://")):
        feed.site_url = parsed.site_url[:URL_MAX_LENGTH]
    feed.etag = result.headers.get("ETag", "")[:500]
    feed.last_modified = result.headers.get("Last-Modified", "")[:100]
    feed.body_hash = body_hash
    feed.check_interval_seconds = _posting_interval(parsed, now=now)
    _mark_healthy(feed, now=now, status=result.status_code, outcome=FetchOutcome.OK, result=result)


def _feed_unchanged(
    feed: Feed, *, now: datetime, result: FetchResult, outcome: FetchOutcome
) -> FeedRefresh:
    # A 304 may carry a fresher validator; a 200 with the same body keeps the old ones valid.
    if result.headers.get("ETag"):
        feed.etag = result.headers["ETag"][:500]
    if result.headers.get("Last-Modified"):
        feed.last_modified = result.headers["Last-Modified"][:100]
    _mark_healthy(feed, now=now, status=result.status_code, outcome=outcome, result=result)
    return FeedRefresh(outcome)


def _mark_healthy(
    feed: Feed, *, now: datetime, status: int, outcome: FetchOutcome, result: FetchResult
) -> None:
    interval = _clamp_interval(
        max(feed.check_interval_seconds, _max_age_seconds(result.headers.get("Cache-Control", "")))
    )
    feed.last_fetched_at = now
    feed.last_outcome = outcome
    feed.last_http_status = status
    feed.error_count = 0
    feed.last_error = ""
    feed.failing_since = None
    feed.next_check_at = now + timedelta(seconds=interval)
    feed.save()


def _feed_failed(
    feed: Feed,
    *,
    now: datetime,
    error: str,
    status: int | None = None,
    retry_after: int = 0,
) -> FeedRefresh:
    feed.last_fetched_at = now
    feed.last_outcome = FetchOutcome.FAILED
    feed.last_http_status = status
    feed.error_count += 1
    feed.last_error = error[:1000]
    feed.failing_since = feed.failing_since or now
    backoff = settings.NEWS_FEED_MIN_INTERVAL_SECONDS * 2 ** min(feed.error_count - 1, 16)
    # Jitter spreads the retries of feeds that failed together (one host down).
    delay = _clamp_interval(max(backoff * random.uniform(0.8, 1.2), retry_after))
    feed.next_check_at = now + timedelta(seconds=delay)
    if now - feed.failing_since >= timedelta(days=settings.NEWS_FEED_PAUSE_AFTER_DAYS):
        feed.paused_at = now
        logger.warning(
            "feed %s paused after failing since %s: %s", feed.pk, feed.failing_since, error
        )
    else:
        logger.info("feed %s failed (%s in a row): %s", feed.pk, feed.error_count, error)
    feed.save()
    return FeedRefresh(FetchOutcome.FAILED)


def _clamp_interval(seconds: float) -> int:
    low = settings.NEWS_FEED_MIN_INTERVAL_SECONDS
    high = settings.NEWS_FEED_MAX_INTERVAL_SECONDS
    return int(min(max(seconds, low), high))


def _posting_interval(parsed: ParsedFeed, *, now: datetime) -> int:
    """Check about as often as the feed posts (a week's posts spread over the week), never
    sooner than its RSS ttl asks, clamped between the configured minimum and a day."""
    recent = sum(
        1 for item in parsed.items if item.published_at and now - _WEEK <= item.published_at <= now
    )
    interval = _WEEK.total_seconds() / recent if recent else settings.NEWS_FEED_MAX_INTERVAL_SECONDS
    return _clamp_interval(max(interval, parsed.ttl_seconds or 0))


def _max_age_seconds(cache_control: str) -> int:
    for directive in cache_control.lower().split(","):
        name, _, value = directive.strip().partition("=")
        if name == "max-age" and value.strip().isdigit():
            return int(value.strip())
    return 0


def _retry_after_seconds(raw: str, *, now: datetime) -> int:
    raw = raw.strip()
    if raw.isdigit():
        return int(raw)
    try:
        when = parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return 0
    if when.tzinfo is None:
        return 0
    return max(0, int((when - now).total_seconds()))


# Entries


def _usable_guids(items: list[ParsedItem]) -> Counter[str]:
    return Counter(item.guid for item in items if item.guid)


def _items_store(feed: Feed, items: list[ParsedItem], *, now: datetime) -> tuple[int, list[str]]:
    """Upsert a feed document's items; returns how many entries are new and a reason for
    each item that could not be stored (the others are stored all the same)."""
    guid_counts = _usable_guids(items)
    keyed: list[tuple[ParsedItem, str, str, str]] = []
    failed: list[str] = []
    for item in items:
        canonical = canonical_url(item.link)
        if len(item.link) > URL_MAX_LENGTH or len(canonical) > URL_MAX_LENGTH:
            failed.append(f"link longer than {URL_MAX_LENGTH} characters: {item.link[:80]}")
            continue
        # A GUID that is missing or repeated within the document identifies nothing, so the
        # canonical link stands in for it.
        guid = item.guid if guid_counts[item.guid] == 1 else f"url:{canonical}"
        keyed.append((item, guid, sha256(f"{feed.pk}\n{guid}"), sha256(canonical)))
    existing = Entry.objects.filter(
        Q(guid_hash__in=[k[2] for k in keyed]) | Q(canonical_url_hash__in=[k[3] for k in keyed])
    )
    by_hash: dict[str, Entry] = {}
    for entry in existing:
        by_hash[entry.guid_hash] = entry
        by_hash[entry.canonical_url_hash] = entry
    # The items new to the database (the first of any that share a key) are stored together;
    # the rest, and all of them if the database refuses that batch, one at a time below.
    fresh: list[tuple[ParsedItem, str, str, str]] = []
    one_by_one: list[tuple[ParsedItem, str, str, str]] = []
    taken: set[str] = set()
    for key in keyed:
        _, _, guid_hash, url_hash = key
        if {guid_hash, url_hash}.isdisjoint(by_hash.keys() | taken):
            fresh.append(key)
            taken |= {guid_hash, url_hash}
        else:
            one_by_one.append(key)
    stored = _entries_create(feed, fresh, now=now)
    if stored is None:
        one_by_one = keyed
        stored = []
    for entry in stored:
        by_hash[entry.guid_hash] = by_hash[entry.canonical_url_hash] = entry
    created = len(stored)
    for item, guid, guid_hash, url_hash in one_by_one:
        entry = by_hash.get(guid_hash) or by_hash.get(url_hash)
        try:
            # A savepoint per item: one the database refuses leaves the others stored.
            with transaction.atomic():
                if entry is None:
                    entry = _entry_create(
                        feed, item, guid=guid, guid_hash=guid_hash, url_hash=url_hash, now=now
                    )
                    if entry is not None:
                        created += 1
                        by_hash[guid_hash] = by_hash[url_hash] = entry
                elif entry.feed_id == feed.pk:
                    _entry_update(entry, item)
                # An entry first stored from another feed stays with that source.
        except (DatabaseError, ValueError, OverflowError) as exc:
            logger.warning("feed %s: item %s not stored: %s", feed.pk, item.link[:200], exc)
            failed.append(f"{item.link[:80]}: {type(exc).__name__}: {str(exc)[:120]}")
    if keyed:
        content_changed()
    return created, failed


def _entries_create(
    feed: Feed, keyed: list[tuple[ParsedItem, str, str, str]], *, now: datetime
) -> list[Entry] | None:
    """A document's new items as entries, with their tags, in three statements rather than a
    handful per item (a first fetch of a feed stores all of its items). None when anything is
    refused: nothing is then stored, and the caller stores each item on its own."""
    if not keyed:
        return []
    try:
        with transaction.atomic():
            built = [
                _entry_build(feed, item, guid=guid, guid_hash=guid_hash, url_hash=url_hash, now=now)
                for item, guid, guid_hash, url_hash in keyed
            ]
            entries = Entry.objects.bulk_create([entry for entry, _ in built])
            tags = _tags_by_slug(names=[name for _, names in built for name in names])
            Entry.tags.through.objects.bulk_create(
                [
                    Entry.tags.through(entry_id=entry.pk, tag_id=tags[slug].pk)
                    for entry, names in built
                    for slug in dict.fromkeys(_tag_slug(name) for name in names)
                    if slug in tags
                ]
            )
    except (DatabaseError, ValueError, OverflowError) as exc:
        logger.info("feed %s: storing its new items together failed, one by one: %s", feed.pk, exc)
        return None
    return entries


def _entry_create(
    feed: Feed, item: ParsedItem, *, guid: str, guid_hash: str, url_hash: str, now: datetime
) -> Entry | None:
    entry, tag_names = _entry_build(
        feed, item, guid=guid, guid_hash=guid_hash, url_hash=url_hash, now=now
    )
    try:
        # A concurrent run may store the same article between our read and this insert.
        with transaction.atomic():
            entry.save()
    except IntegrityError:
        return None
    entry.tags.set(tags_named(names=tag_names))
    return entry


def _entry_build(
    feed: Feed, item: ParsedItem, *, guid: str, guid_hash: str, url_hash: str, now: datetime
) -> tuple[Entry, list[str]]:
    """An unsaved entry for a new item, with its offline summary, and its tags' names."""
    summary = summarise_offline(title=item.title, text=item.text, language=feed.language)
    published = item.published_at
    entry = Entry(
        feed=feed,
        guid=guid,
        guid_hash=guid_hash,
        url=item.link,
        canonical_url=canonical_url(item.link),
        canonical_url_hash=url_hash,
        title=item.title,
        author=item.author,
        image_url=item.image_url if len(item.image_url) <= URL_MAX_LENGTH else "",
        language=feed.language,
        published_at=published,
        created_at=now,
        listed_at=min(published, now) if published else now,
        content_fingerprint=fingerprint(title=item.title, text=item.text),
        summary_original=summary.original,
        summary_translated=summary.swedish,
        summary_state=SummaryState.EXTRACTED,
        platform_relevant=summary.platform_relevant,
    )
    return entry, list(summary.tags)


def _entry_update(entry: Entry, item: ParsedItem) -> None:
    new_fingerprint = fingerprint(title=item.title, text=item.text)
    changed: list[str] = []
    if not entry.image_url and item.image_url and len(item.image_url) <= URL_MAX_LENGTH:
        entry.image_url = item.image_url
        changed.append("image_url")
    if new_fingerprint != entry.content_fingerprint:
        # The model step sees the new fingerprint and summarises again; an extract is redone
        # here because it costs nothing. Editors' summaries are theirs to update.
        entry.title = item.title
        entry.content_fingerprint = new_fingerprint
        changed += ["title", "content_fingerprint"]
        if entry.summary_state == SummaryState.EXTRACTED:
            summary = summarise_offline(title=item.title, text=item.text, language=entry.language)
            entry.summary_original = summary.original
            entry.summary_translated = summary.swedish
            changed += ["summary_original", "summary_translated"]
    if changed:
        entry.save(update_fields=changed)


def tags_named(*, names: Iterable[str]) -> list[Tag]:
    """The tags with these names, created when new; names that slugify alike are one tag."""
    return list(_tags_by_slug(names=names).values())


def _tag_slug(name: str) -> str:
    return slugify(name)[:60]


def _tags_by_slug(*, names: Iterable[str]) -> dict[str, Tag]:
    """The tags with these names by slug (read in one query), created when new."""
    wanted: dict[str, str] = {}
    for name in names:
        wanted.setdefault(_tag_slug(name), name)
    wanted.pop("", None)
    found = {tag.slug: tag for tag in Tag.objects.filter(slug__in=wanted)}
    tags: dict[str, Tag] = {}
    for slug, name in wanted.items():
        tag = found.get(slug)
        if tag is None:
            try:
                with transaction.atomic():
                    tag = Tag.objects.create(name=name[:60], slug=slug)
            except IntegrityError:
                tag = Tag.objects.filter(Q(slug=slug) | Q(name=name[:60])).first()
        if tag is not None:
            tags[slug] = tag
    return tags


# Summaries


def entries_summarise(
    *, model: ChatModel, fetcher: Fetcher = http_fetch, progress: Progress | None = None
) -> SummaryReport:
    """The summaries step: every entry due a model summary, within the model's call budget."""
    report = SummaryReport()
    progress = progress or _NoProgress()
    now = timezone.now()
    due = list(selectors.entries_due_for_summary(now=now)[: model.max_calls])
    progress.start("summaries", len(due))
    for entry in due:
        try:
            if entry_summarise(entry=entry, fetcher=fetcher, model=model):
                report.entries_summarised += 1
            else:
                report.summaries_failed += 1
        except ModelUnavailable as exc:
            report.summaries_failed += 1
            logger.warning("the model is unavailable; summaries wait for the next run: %s", exc)
            break
        except BudgetExhausted:
            logger.info("summary budget spent; the rest waits for the next run")
            break
        finally:
            progress.advance()
    return report


def entry_claim(*, entry: Entry, now: datetime) -> bool:
    claimed = (
        Entry.objects.filter(pk=entry.pk)
        .filter(Q(summary_lease_until__isnull=True) | Q(summary_lease_until__lt=now))
        .update(summary_lease_until=now + _CLAIM_LEASE)
    )
    return claimed == 1


def entry_summarise(*, entry: Entry, model: ChatModel, fetcher: Fetcher = http_fetch) -> bool:
    """Ask the model for this entry's summaries. False when the model failed (recorded on the
    entry); raises BudgetExhausted when the run may not call the model again."""
    if not entry_claim(entry=entry, now=timezone.now()):
        return False
    article_text, page_image = _article_page(entry, fetcher=fetcher)
    try:
        summary = model.summarise(
            title=entry.title,
            text=article_text or entry.summary_original,
            language=entry.language,
            source=entry.feed.title,
        )
    except SummaryError as exc:
        Entry.objects.filter(pk=entry.pk).update(
            summary_attempts=F("summary_attempts") + 1,
            summary_error=str(exc)[:1000],
            summary_lease_until=None,
        )
        return False
    except ModelUnavailable as exc:
        # Not the entry's fault: no attempt is counted against it, the error is shown to editors.
        Entry.objects.filter(pk=entry.pk).update(
            summary_error=str(exc)[:1000], summary_lease_until=None
        )
        raise
    except BudgetExhausted:
        Entry.objects.filter(pk=entry.pk).update(summary_lease_until=None)
        raise
    with transaction.atomic():
        entry.summary_original = summary.original or entry.summary_original
        entry.summary_translated = summary.swedish
        entry.summary_state = SummaryState.TRANSLATED
        entry.summary_fingerprint = entry.content_fingerprint
        entry.resummarise_requested = False
        entry.summary_attempts = 0
        entry.summary_error = ""
        entry.summarised_at = timezone.now()
        entry.summary_lease_until = None
        entry.platform_relevant = summary.platform_relevant
        if not entry.image_url and page_image:
            entry.image_url = page_image
        entry.save()
        entry.tags.set(tags_named(names=summary.tags))
    content_changed()
    return True


def _article_page(entry: Entry, *, fetcher: Fetcher) -> tuple[str, str]:
    """The article's full text (for the model only, never stored) and its og:image."""
    if not settings.NEWS_FETCH_ARTICLE_PAGES:
        return "", ""
    try:
        result = fetcher(entry.url, headers={"Accept": _HTML_ACCEPT})
    except FetchError as exc:
        logger.info("article page of entry %s unreadable: %s", entry.pk, exc)
        return "", ""
    if result.status_code != 200:
        return "", ""
    content_type = result.headers.get("Content-Type", "")
    page = article_read(
        body=result.body, content_type=content_type, base_url=result.url or entry.url
    )
    return page.text, page.image_url


# Editors


def entries_resummarise_request(*, entry_ids: Iterable[int]) -> int:
    """An editor asks for fresh model summaries; the next run makes them."""
    return Entry.objects.filter(pk__in=list(entry_ids)).update(
        resummarise_requested=True, summary_attempts=0, summary_error=""
    )


def entry_view_record(*, entry_id: int, day: date) -> None:
    """Count one article view (behind popularity and the deprecated click_count)."""
    with transaction.atomic():
        view, _ = EntryView.objects.get_or_create(entry_id=entry_id, day=day)
        EntryView.objects.filter(pk=view.pk).update(count=F("count") + 1)
        Entry.objects.filter(pk=entry_id).update(view_count=F("view_count") + 1)
