"""Reads for the review-flag report and citation records."""

from datetime import date, datetime
from typing import Any, cast

from django.db.models import F, Window
from django.db.models.functions import RowNumber
from django.urls import reverse

from compliance_site.monitoring.models import ReviewFlag, SourceSnapshot
from compliance_site.records.models import ResourceType
from compliance_site.records.selectors import live_resources

STALE_AFTER_MONTHS = 6
RECENT_SNAPSHOTS = 5


def months_before(day: date, months: int) -> date:
    month_index = day.year * 12 + day.month - 1 - months
    year, month = divmod(month_index, 12)
    month += 1
    # The 31st of a month without one becomes the month's last day.
    for candidate_day in range(day.day, 27, -1):
        try:
            return date(year, month, candidate_day)
        except ValueError:
            continue
    return date(year, month, min(day.day, 28))


def review_report(*, now: datetime) -> dict[str, Any]:
    states: dict[str, dict[str, Any]] = {
        resource_key: cast(dict[str, Any], payload)
        for resource_key, payload in live_resources(resource_type=ResourceType.STATE).values_list(
            "resource_key", "current__payload"
        )
    }
    latest_flag: dict[str, ReviewFlag] = {}
    for flag in ReviewFlag.objects.filter(cleared_at__isnull=True).order_by("created_at"):
        latest_flag[flag.state_abbreviation] = flag
    latest_fetch = {
        snapshot.state_abbreviation: snapshot
        for snapshot in SourceSnapshot.objects.filter(
            successful=True, state_abbreviation__in=list(latest_flag)
        )
        .annotate(
            rank=Window(
                RowNumber(), partition_by=[F("state_abbreviation")], order_by=F("fetched_at").desc()
            )
        )
        .filter(rank=1)
    }
    stale_before = months_before(now.date(), STALE_AFTER_MONTHS)
    flagged, stale = [], []
    for key in sorted(states):
        payload = states[key]
        base = {
            "abbreviation": key,
            "name": payload["name"],
            "yaml_path": f"states/{key}.yaml",
            "last_verified_at": payload["last_verified_at"],
        }
        if key in latest_flag:
            fetch = latest_fetch.get(key)
            flagged.append(
                {
                    **base,
                    "flagged_reason": latest_flag[key].reason,
                    "changed_url": fetch.url if fetch else None,
                    "changed_at": fetch.fetched_at if fetch else None,
                    "diff_url": _diff_url(latest_flag[key]),
                }
            )
        elif date.fromisoformat(payload["last_verified_at"]) <= stale_before:
            stale.append(base)
    # A flag can name a state that has no published record yet; it cannot be re-verified
    # from the data, so it is not listed.
    return {"generated_at": now, "flagged": flagged, "stale": stale}


def _diff_url(flag: ReviewFlag) -> str | None:
    """Where a reviewer reads what changed: the admin page of the snapshot that raised the
    flag (its diff and text), a path on this service; None for an editor's flag."""
    if flag.snapshot_id is None:
        return None
    return reverse("admin:monitoring_sourcesnapshot_change", args=[flag.snapshot_id])


def recent_snapshots(*, state_abbreviation: str) -> list[SourceSnapshot]:
    return list(
        SourceSnapshot.objects.filter(state_abbreviation=state_abbreviation).order_by(
            "-fetched_at", "-pk"
        )[:RECENT_SNAPSHOTS]
    )
