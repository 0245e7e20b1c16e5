"""The weekly source monitor and the review-flag lifecycle.

The monitor handles one source at a time: whatever goes wrong with one page (the network, its
charset, a URL the database cannot hold, a database error while recording it) is recorded on
that source (`MonitoredSource`, shown in the admin and the run's summary) and the run goes on.
A source that keeps failing is backed off instead of being tried every run.
"""

import hashlib
import logging
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import date, datetime, timedelta
from typing import Any, cast

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from compliance_site.monitoring.diffs import text_bounded, text_diff
from compliance_site.monitoring.models import (
    FlagOrigin,
    MonitoredSource,
    ReviewFlag,
    SourceSnapshot,
)
from compliance_site.monitoring.normalize import (
    NORMALIZER_VERSION,
    PageTooLong,
    content_hash,
    page_paragraphs,
)
from compliance_site.monitoring.review_cache import review_report_forget
from compliance_site.records.models import ResourceType
from compliance_site.records.selectors import live_resources
from shared.fetch import FetchError, FetchResult, fetch

logger = logging.getLogger(__name__)

_FETCH_WORKERS = 8
# The longest URL the monitor fetches; snapshots store URLs up to this length.
MAX_URL_LENGTH = 2000
# Consecutive failures before a source is backed off, the first wait, and the longest one.
BACKOFF_AFTER_FAILURES = 3
BACKOFF_FIRST = timedelta(days=7)
BACKOFF_LONGEST = timedelta(days=56)
# A weekly timer does not fire to the second: a source due "in 7 days" is due at that run.
_BACKOFF_SLACK = timedelta(hours=6)

# Fetches one URL; the default is shared.fetch with the monitor's settings. The demo passes
# one that answers from pages it serves itself.
PageFetcher = Callable[[str], FetchResult]


@dataclass(frozen=True)
class FetchOutcome:
    state_abbreviation: str
    url: str
    name: str
    fetched_at: datetime
    successful: bool
    content_hash: str = ""
    status_code: int | None = None
    error: str = ""  # a machine-readable code (stored on the snapshot)
    detail: str = ""  # the readable reason, for the source's record and the summary
    text: str = ""  # the normalised paragraphs, one a line (diffs.text_bounded)


@dataclass
class MonitorReport:
    fetched: int = 0
    failed: int = 0
    backed_off: int = 0
    changed: list[str] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    # "<state> <url>: <reason>" for each source that failed in this run.
    failures: list[str] = field(default_factory=list)


def monitored_sources() -> list[tuple[str, str, str]]:
    """(state, source name, url) for every source URL of every live citation record, each
    (state, url) once."""
    seen: dict[tuple[str, str], str] = {}
    for resource in live_resources(resource_type=ResourceType.CITATION):
        payload = cast(dict[str, Any], resource.current.payload)
        for source in payload["source_urls"]:
            seen.setdefault((resource.resource_key, source["url"]), source["name"])
    return [(state, name, url) for (state, url), name in seen.items()]


def _default_fetcher(url: str) -> FetchResult:
    return fetch(
        url,
        user_agent=settings.MONITOR_USER_AGENT,
        timeout=settings.MONITOR_TIMEOUT_SECONDS,
        max_bytes=settings.MONITOR_MAX_BYTES,
    )


def source_fetch(
    *, state_abbreviation: str, name: str, url: str, fetcher: PageFetcher | None = None
) -> FetchOutcome:
    """Fetch and hash one page; every failure becomes an unsuccessful outcome with a reason,
    never an exception."""
    fetched_at = timezone.now()
    failed = _failure(state_abbreviation, url, name, fetched_at)
    if len(url) > MAX_URL_LENGTH:
        return failed(
            "url_too_long",
            f"the URL is {len(url)} characters long; the monitor fetches URLs of up to "
            f"{MAX_URL_LENGTH}",
        )
    try:
        result = (fetcher or _default_fetcher)(url)
    except FetchError as exc:
        return failed(exc.code, f"{exc.code}: {exc.message}")
    except Exception as exc:  # one page must not stop the run
        logger.exception("fetching a monitored source failed unexpectedly")
        return failed("fetch_failed", f"{type(exc).__name__}: {exc}")
    if result.status_code != 200:
        outcome = failed(
            f"http_{result.status_code}", f"the page answered HTTP {result.status_code}"
        )
        return replace(outcome, status_code=result.status_code)
    try:
        content_type = result.headers.get("content-type")
        max_chars = settings.MONITOR_MAX_READ_CHARS
        digest = content_hash(result.body, content_type, max_chars=max_chars)
        text = text_bounded(page_paragraphs(result.body, content_type, max_chars=max_chars))
    except PageTooLong as exc:
        outcome = failed("too_long_to_compare", str(exc))
        return replace(outcome, status_code=result.status_code)
    except Exception as exc:  # one page must not stop the run
        logger.exception("normalising a monitored page failed")
        outcome = failed("unreadable_page", f"the page could not be read: {exc}")
        return replace(outcome, status_code=result.status_code)
    return FetchOutcome(
        state_abbreviation,
        url,
        name,
        fetched_at,
        True,
        digest,
        status_code=result.status_code,
        text=text,
    )


def _failure(
    state: str, url: str, name: str, fetched_at: datetime
) -> Callable[[str, str], FetchOutcome]:
    """A maker of this source's unsuccessful outcomes, from a code and a readable reason."""

    def failed(code: str, detail: str) -> FetchOutcome:
        return FetchOutcome(state, url, name, fetched_at, False, error=code, detail=detail)

    return failed


def monitor_sources(*, fetcher: PageFetcher | None = None) -> MonitorReport:
    """Fetch every monitored URL that is not backed off (a few at a time) and record what
    was found, one source at a time."""
    now = timezone.now()
    records = _source_records(monitored_sources())
    due = [record for record in records if _is_due(record, now)]
    report = MonitorReport(backed_off=len(records) - len(due))
    with ThreadPoolExecutor(max_workers=_FETCH_WORKERS) as pool:
        outcomes = pool.map(
            lambda record: source_fetch(
                state_abbreviation=record.state_abbreviation,
                name=record.name,
                url=record.url,
                fetcher=fetcher,
            ),
            due,
        )
        for record, outcome in zip(due, outcomes, strict=True):
            outcome, changed = _record_outcome(outcome)
            source_status_record(source=record, outcome=outcome)
            report.fetched += 1
            if not outcome.successful:
                report.failed += 1
                report.errors[outcome.error] += 1
                report.failures.append(f"{record} : {outcome.detail or outcome.error}")
            if changed:
                report.changed.append(f"{outcome.state_abbreviation} {outcome.url}")
    return report


def _record_outcome(outcome: FetchOutcome) -> tuple[FetchOutcome, bool]:
    """Store the snapshot; a source whose snapshot cannot be stored fails with the reason."""
    if len(outcome.url) > MAX_URL_LENGTH:
        return outcome, False  # no snapshot can hold it; the source record says why
    try:
        return outcome, snapshot_record(outcome=outcome)
    except Exception as exc:  # one source must not stop the run
        logger.exception("recording a monitoring snapshot failed")
        detail = f"the snapshot could not be stored: {type(exc).__name__}: {exc}"
        return replace(outcome, successful=False, error="not_recorded", detail=detail), False


def _source_records(sources: list[tuple[str, str, str]]) -> list[MonitoredSource]:
    """The MonitoredSource row of each source, created on first sight."""
    wanted = {
        (state, _url_hash(url)): MonitoredSource(
            state_abbreviation=state, url=url, url_hash=_url_hash(url), name=name[:255]
        )
        for state, name, url in sources
    }
    MonitoredSource.objects.bulk_create(wanted.values(), ignore_conflicts=True)
    existing = {
        (row.state_abbreviation, row.url_hash): row
        for row in MonitoredSource.objects.filter(
            url_hash__in=[url_hash for _state, url_hash in wanted]
        )
    }
    return [existing[key] for key in wanted if key in existing]


def _url_hash(url: str) -> str:
    return hashlib.sha256(url.encode("utf-8", errors="surrogatepass")).hexdigest()


def _is_due(source: MonitoredSource, now: datetime) -> bool:
    return source.next_attempt_at is None or source.next_attempt_at <= now


def backoff_delay(consecutive_failures: int) -> timedelta | None:
    """How long a source that failed this many times in a row waits; None: the next run."""
    if consecutive_failures < BACKOFF_AFTER_FAILURES:
        return None
    doublings = min(consecutive_failures - BACKOFF_AFTER_FAILURES, 8)
    return min(BACKOFF_FIRST * (1 << doublings), BACKOFF_LONGEST)


def source_status_record(*, source: MonitoredSource, outcome: FetchOutcome) -> None:
    """Keep the source's record: its last error, its failure streak and its next attempt."""
    source.last_attempt_at = outcome.fetched_at
    if outcome.successful:
        source.consecutive_failures = 0
        source.last_error = ""
        source.last_success_at = outcome.fetched_at
        source.next_attempt_at = None
    else:
        source.consecutive_failures += 1
        source.last_error = outcome.detail or outcome.error
        delay = backoff_delay(source.consecutive_failures)
        source.next_attempt_at = outcome.fetched_at + delay - _BACKOFF_SLACK if delay else None
    try:
        source.save(
            update_fields=[
                "last_attempt_at",
                "consecutive_failures",
                "last_error",
                "last_success_at",
                "next_attempt_at",
            ]
        )
    except Exception:  # the run's summary still reports the outcome
        logger.exception("recording the status of a monitored source failed")


def sources_retry(*, sources: "list[MonitoredSource]") -> int:
    """Try these sources at the next run, whatever their backoff."""
    ids = [source.pk for source in sources]
    return MonitoredSource.objects.filter(pk__in=ids).update(next_attempt_at=None)


@transaction.atomic
def snapshot_record(*, outcome: FetchOutcome) -> bool:
    """Store the snapshot; flag the state when a successful fetch differs from the previous
    successful one. Returns whether the page changed. Failures never flag."""
    previous = (
        SourceSnapshot.objects.filter(
            state_abbreviation=outcome.state_abbreviation, url=outcome.url, successful=True
        )
        .order_by("-fetched_at")
        .first()
    )
    changed = (
        outcome.successful
        and previous is not None
        and previous.normalizer_version == NORMALIZER_VERSION
        and previous.content_hash != outcome.content_hash
    )
    diff = ""
    if changed and previous is not None and previous.text and outcome.text:
        diff = text_diff(
            before=previous.text,
            after=outcome.text,
            before_at=previous.fetched_at,
            after_at=outcome.fetched_at,
            url=outcome.url,
        )
    snapshot = SourceSnapshot.objects.create(
        state_abbreviation=outcome.state_abbreviation,
        url=outcome.url,
        fetched_at=outcome.fetched_at,
        content_hash=outcome.content_hash,
        successful=outcome.successful,
        status_code=outcome.status_code,
        error=outcome.error,
        normalizer_version=NORMALIZER_VERSION,
        text=outcome.text,
        diff=diff,
    )
    if outcome.successful and previous is not None:
        # One text per URL: the newest is what the next fetch is compared with, and what
        # changed before is kept in the diffs.
        SourceSnapshot.objects.filter(pk=previous.pk).update(text="")
    if changed:
        flag_raise(
            state_abbreviation=outcome.state_abbreviation,
            reason=f"The source page '{outcome.name}' changed ({outcome.url}).",
            origin=FlagOrigin.MONITOR,
            snapshot=snapshot,
        )
    return changed


def flag_raise(
    *,
    state_abbreviation: str,
    reason: str,
    origin: str = FlagOrigin.EDITOR,
    snapshot: SourceSnapshot | None = None,
    created_by: str = "",
) -> ReviewFlag:
    flag = ReviewFlag.objects.create(
        state_abbreviation=state_abbreviation,
        reason=reason,
        origin=origin,
        snapshot=snapshot,
        created_at=timezone.now(),
        created_by=created_by,
    )
    review_report_forget()
    return flag


def flags_clear(*, flags: "list[ReviewFlag]", reason: str) -> int:
    ids = [flag.pk for flag in flags]
    cleared = ReviewFlag.objects.filter(pk__in=ids, cleared_at__isnull=True).update(
        cleared_at=timezone.now(), cleared_reason=reason[:500]
    )
    review_report_forget()
    return cleared


def flags_clear_verified(*, state_abbreviation: str, verified_on: date, version: int) -> int:
    """Clear open flags raised on or before the day a newly published version was verified."""
    open_flags = list(
        ReviewFlag.objects.filter(state_abbreviation=state_abbreviation, cleared_at__isnull=True)
    )
    verified = [flag for flag in open_flags if flag.created_at.date() <= verified_on]
    if not verified:
        return 0
    return flags_clear(
        flags=verified,
        reason=f"Re-verified on {verified_on.isoformat()} in state version {version}.",
    )
