"""The weekly source monitor and the review-flag lifecycle."""

from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import date, datetime

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from compliance_site.monitoring.models import FlagOrigin, ReviewFlag, SourceSnapshot
from compliance_site.monitoring.normalize import content_hash
from compliance_site.records.models import ResourceType
from compliance_site.records.selectors import live_resources
from shared.fetch import FetchError, fetch

REVIEW_REPORT_CACHE_KEY = "compliance:review_flags:v1"
_FETCH_WORKERS = 8


@dataclass(frozen=True)
class FetchOutcome:
    state_abbreviation: str
    url: str
    name: str
    fetched_at: datetime
    successful: bool
    content_hash: str = ""
    status_code: int | None = None
    error: str = ""


@dataclass
class MonitorReport:
    fetched: int = 0
    failed: int = 0
    changed: list[str] = field(default_factory=list)
    errors: Counter = field(default_factory=Counter)


def monitored_sources() -> list[tuple[str, str, str]]:
    """(state, source name, url) for every source URL of every live citation record."""
    return [
        (resource.resource_key, source["name"], source["url"])
        for resource in live_resources(resource_type=ResourceType.CITATION)
        for source in resource.current.payload["source_urls"]
    ]


def source_fetch(*, state_abbreviation: str, name: str, url: str) -> FetchOutcome:
    """Fetch one page; every failure becomes an unsuccessful outcome, never an exception."""
    fetched_at = timezone.now()
    try:
        result = fetch(
            url,
            user_agent=settings.MONITOR_USER_AGENT,
            timeout=settings.MONITOR_TIMEOUT_SECONDS,
            max_bytes=settings.MONITOR_MAX_BYTES,
        )
    except FetchError as exc:
        return FetchOutcome(state_abbreviation, url, name, fetched_at, False, error=exc.code)
    if result.status_code != 200:
        return FetchOutcome(
            state_abbreviation,
            url,
            name,
            fetched_at,
            False,
            status_code=result.status_code,
            error=f"http_{result.status_code}",
        )
    digest = content_hash(result.body, result.headers.get("content-type"))
    return FetchOutcome(
        state_abbreviation, url, name, fetched_at, True, digest, status_code=result.status_code
    )


def monitor_sources() -> MonitorReport:
    """Fetch every monitored URL (a few at a time) and record what was found."""
    sources = monitored_sources()
    report = MonitorReport()
    with ThreadPoolExecutor(max_workers=_FETCH_WORKERS) as pool:
        outcomes = pool.map(
            lambda source: source_fetch(
                state_abbreviation=source[0], name=source[1], url=source[2]
            ),
            sources,
        )
        for outcome in outcomes:
            changed = snapshot_record(outcome=outcome)
            report.fetched += 1
            if not outcome.successful:
                report.failed += 1
                report.errors[outcome.error] += 1
            if changed:
                report.changed.append(f"{outcome.state_abbreviation} {outcome.url}")
    return report


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
    snapshot = SourceSnapshot.objects.create(
        state_abbreviation=outcome.state_abbreviation,
        url=outcome.url,
        fetched_at=outcome.fetched_at,
        content_hash=outcome.content_hash,
        successful=outcome.successful,
        status_code=outcome.status_code,
        error=outcome.error,
    )
    changed = (
        outcome.successful
        and previous is not None
        and previous.content_hash != outcome.content_hash
    )
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
    cache.delete(REVIEW_REPORT_CACHE_KEY)
    return flag


def flags_clear(*, flags: "list[ReviewFlag]", reason: str) -> int:
    ids = [flag.pk for flag in flags]
    cleared = ReviewFlag.objects.filter(pk__in=ids, cleared_at__isnull=True).update(
        cleared_at=timezone.now(), cleared_reason=reason[:500]
    )
    cache.delete(REVIEW_REPORT_CACHE_KEY)
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
