"""Sources and the feeds step: registering a source, fetching every due feed, and each feed's
health (validators, posting interval, backoff after failures, pausing after days of them).

One broken source never stops the others. Overlapping runs (the periodic task and an
operator's `ingest`) are safe: a feed is claimed by a compare-and-set on its `next_check_at`,
so no two runs fetch the same feed. A document's items are stored by news_site.news.entries.
"""

import hashlib
import logging
import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Protocol, cast

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from news_site.news import selectors
from news_site.news.cleaning import URL_MAX_LENGTH, clean_text, clean_url
from news_site.news.entries import entries_store
from news_site.news.fetch_pool import FetchJob, fetch_all
from news_site.news.fetching import Fetcher, http_fetch
from news_site.news.generation import content_changed
from news_site.news.models import Feed, FeedKind, FetchOutcome
from news_site.news.parsing import ParsedEpisode, ParsedFeed, UnreadableFeed, parse_feed
from news_site.news.progress import NoProgress, Progress
from shared.fetch import FetchError, FetchResult

logger = logging.getLogger(__name__)

FEED_ACCEPT = (
    "application/rss+xml, application/atom+xml, application/xml;q=0.9, text/xml;q=0.9, */*;q=0.1"
)
# Content types that are certainly not a feed; anything else is given to the parser.
_NOT_FEED_TYPES = ("text/html", "image/", "audio/", "video/", "application/pdf", "font/")
_CLAIM_LEASE = timedelta(minutes=10)
_WEEK = timedelta(days=7)


class EpisodesStore(Protocol):
    """Stores a podcast feed's parsed episodes, returning how many were new. The podcasts app
    provides it (the ingest passes it in), so this core app knows nothing of podcasts."""

    def __call__(self, feed: Feed, episodes: list[ParsedEpisode], *, fetcher: Fetcher) -> int: ...


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


@dataclass(frozen=True)
class FeedRefresh:
    outcome: FetchOutcome
    entries_new: int = 0
    episodes_new: int = 0
    items_skipped: int = 0


# Sources


def feed_add(
    *, url: str, title: str = "", language: str = "en", kind: str = FeedKind.ARTICLES
) -> tuple[Feed, bool]:
    """Register a source (idempotent by URL). The first fetch fills an empty title.
    Raises ValueError for a URL that is not an absolute http(s) URL fitting the column."""
    cleaned = clean_url(url)
    if not cleaned or cleaned != url.strip():
        # In the active language: the admin's OPML import shows it to editors.
        raise ValueError(
            gettext(
                "not an absolute http(s) URL of at most %(limit)d characters without "
                "control characters"
            )
            % {"limit": URL_MAX_LENGTH}
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


# The feeds step (news_site.ingest runs it first)


def feeds_refresh_due(
    *,
    store_episodes: EpisodesStore,
    fetcher: Fetcher = http_fetch,
    progress: Progress | None = None,
) -> FeedsReport:
    """The feeds step: every due feed, each claimed so overlapping runs never share one."""
    report = FeedsReport()
    progress = progress or NoProgress()
    now = timezone.now()
    due = list(selectors.feeds_due(now=now))
    progress.start("feeds", len(due))
    jobs = []
    for feed in due:
        if feed_claim(feed=feed, now=now):
            jobs.append(FetchJob(feed, feed.url, feed_request_headers(feed)))
        else:
            progress.advance()
    # Fetched in parallel (news_site.news.fetch_pool), stored here one by one as they arrive:
    # each source is public as soon as its own answer is in.
    fetched = fetch_all(
        jobs,
        fetcher=fetcher,
        workers=settings.NEWS_FETCH_CONCURRENCY,
        per_host=settings.NEWS_FETCH_PER_HOST,
    )
    for feed, outcome in fetched:
        refresh = feed_fetched(
            feed=feed, outcome=outcome, fetcher=fetcher, store_episodes=store_episodes
        )
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
    """Take `feed` for this run: moves its next check past the lease only if it is due and
    nobody else did (a run's claim moves it out of due, so the worker's "Fetch now" sees it)."""
    claimed = Feed.objects.filter(
        pk=feed.pk, next_check_at=feed.next_check_at, next_check_at__lte=now
    ).update(next_check_at=now + _CLAIM_LEASE)
    return claimed == 1


def feed_refresh(
    *, feed: Feed, fetcher: Fetcher = http_fetch, store_episodes: EpisodesStore | None = None
) -> FeedRefresh:
    """Fetch and store one feed. Never raises for anything the source does wrong; a podcast
    feed needs `store_episodes` (a caller's mistake, raised before anything is fetched)."""
    if feed.kind == FeedKind.PODCAST and store_episodes is None:
        raise ValueError(f"feed {feed.pk} is a podcast feed: pass store_episodes")
    try:
        outcome: FetchResult | FetchError = fetcher(feed.url, headers=feed_request_headers(feed))
    except FetchError as exc:
        outcome = exc
    return feed_fetched(feed=feed, outcome=outcome, fetcher=fetcher, store_episodes=store_episodes)


def feed_request_headers(feed: Feed) -> dict[str, str]:
    """The feed's request: a feed type asked for, conditional on the validators it sent."""
    headers = {"Accept": FEED_ACCEPT}
    if feed.etag:
        headers["If-None-Match"] = feed.etag
    if feed.last_modified:
        headers["If-Modified-Since"] = feed.last_modified
    return headers


def feed_fetched(
    *,
    feed: Feed,
    outcome: FetchResult | FetchError,
    fetcher: Fetcher = http_fetch,
    store_episodes: EpisodesStore | None = None,
) -> FeedRefresh:
    """Store what fetching `feed` gave (its response or the error): entries, validators,
    health. Never raises for anything the source does wrong."""
    now = timezone.now()
    if isinstance(outcome, FetchError):
        return _feed_failed(feed, now=now, error=f"{outcome.code}: {outcome.message}")
    result = outcome
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
                # Set for a podcast feed: checked before the fetch.
                new_episodes = cast(EpisodesStore, store_episodes)(
                    feed, parsed.episodes, fetcher=fetcher
                )
            else:
                new_entries, failed = entries_store(feed=feed, items=parsed.items, now=now)
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
