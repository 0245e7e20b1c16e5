"""Reads of published records."""

from datetime import date
from typing import Any

from django.db.models import Max, OuterRef, QuerySet, Subquery

from compliance_site.records.documents import FIRST_SCHEMA_VERSION, JURISDICTIONS
from compliance_site.records.models import (
    IndexCursor,
    ReindexOutcome,
    ReindexProblem,
    ReindexRun,
    Resource,
    ResourceType,
    ResourceVersion,
)

# The largest version number a read looks up (the column is a 32-bit integer).
MAX_VERSION = 2**31 - 1


class RecordNotFound(Exception):
    """A read found nothing. The API renders `code` with status 404."""

    code = "not_found"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class UnknownState(RecordNotFound):
    """No such jurisdiction, or none of its records is published yet."""

    code = "state_not_found"


class UnknownVersion(RecordNotFound):
    """The state is published, but not in the version (or on the day) asked for."""

    code = "version_not_found"


def jurisdiction_normalize(abbreviation: str) -> str | None:
    """Upper-case a path's abbreviation; None when it names no jurisdiction."""
    candidate = abbreviation.upper()
    return candidate if candidate in JURISDICTIONS else None


def jurisdiction_key(abbreviation: str) -> str:
    """The jurisdiction a path names (case-insensitive); raises UnknownState."""
    # ASCII first: str.upper() maps some letters to two ("\ufb02" gives "FL").
    key = jurisdiction_normalize(abbreviation) if abbreviation.isascii() else None
    if key is None:
        raise UnknownState(f"no jurisdiction with the abbreviation '{abbreviation[:10]}'")
    return key


def resource_read(
    *, resource_type: str, key: str, version: int | None = None, day: date | None = None
) -> ResourceVersion:
    """The live version of a resource, a pinned `version`, or the one live at the end of
    `day`. The one place that tells "no such state" (UnknownState) from "no such version"
    (UnknownVersion)."""
    if version is not None:
        found = (
            resource_version(resource_type=resource_type, key=key, version=version)
            if 1 <= version <= MAX_VERSION
            else None
        )
    elif day is not None:
        found = resource_as_of(resource_type=resource_type, key=key, day=day)
    else:
        found = resource_live(resource_type=resource_type, key=key)
    if found is not None:
        return found
    pinned = version is not None or day is not None
    if not pinned or resource_live(resource_type=resource_type, key=key) is None:
        raise UnknownState(f"no published record for {key}")
    if version is not None:
        raise UnknownVersion(f"{key} has no version {str(version)[:20]}")
    assert day is not None  # pinned, and not by version
    raise UnknownVersion(f"{key} had no published version on {day.isoformat()}")


def resource_live(*, resource_type: str, key: str) -> ResourceVersion | None:
    resource = (
        Resource.objects.select_related("current")
        .filter(resource_type=resource_type, resource_key=key)
        .first()
    )
    return resource.current if resource else None


def resource_version(*, resource_type: str, key: str, version: int) -> ResourceVersion | None:
    return ResourceVersion.objects.filter(
        resource_type=resource_type, resource_key=key, version=version
    ).first()


def resource_as_of(*, resource_type: str, key: str, day: date) -> ResourceVersion | None:
    """The version that was live at the end of `day` (released on or before it)."""
    return (
        ResourceVersion.objects.filter(
            resource_type=resource_type, resource_key=key, released_at__lte=day
        )
        .order_by("-version")
        .first()
    )


def resources_at(
    *, resource_type: str, day: date | None = None, sequence: int | None = None
) -> list[ResourceVersion]:
    """Every resource's version live at the end of `day` (what resource_as_of answers for each
    key) and/or when the change feed stood at `sequence`, by key, in one query. Keys with no
    such version are left out."""
    versions = ResourceVersion.objects.filter(resource_type=resource_type)
    if day is not None:
        versions = versions.filter(released_at__lte=day)
    if sequence is not None:
        versions = versions.filter(sequence__lte=sequence)
    latest = versions.filter(resource_key=OuterRef("resource_key")).order_by("-version")
    return list(versions.filter(pk=Subquery(latest.values("pk")[:1])).order_by("resource_key"))


def resource_versions(*, resource_type: str, key: str) -> QuerySet[ResourceVersion]:
    return ResourceVersion.objects.filter(resource_type=resource_type, resource_key=key).order_by(
        "-version"
    )


def live_resources(*, resource_type: str) -> QuerySet[Resource]:
    return (
        Resource.objects.select_related("current")
        .filter(resource_type=resource_type)
        .order_by("resource_key")
    )


def state_names(keys: list[str] | None = None) -> dict[str, str]:
    """Live state names by abbreviation, in one query."""
    states = Resource.objects.filter(resource_type=ResourceType.STATE)
    if keys is not None:
        states = states.filter(resource_key__in=keys)
    return dict(states.values_list("resource_key", "current__payload__name"))


def dataset_metadata() -> dict[str, Any]:
    summary = ResourceVersion.objects.aggregate(latest=Max("published_at"))
    return {
        "state_count": Resource.objects.filter(resource_type=ResourceType.STATE).count(),
        "latest_snapshot_at": summary["latest"],
        "schema_version": schema_version_current(),
    }


def schema_version_current() -> str:
    """The state schema major the data repository follows at the last indexed commit."""
    current = IndexCursor.objects.filter(name="default").values_list("schema_version", flat=True)
    return current.first() or FIRST_SCHEMA_VERSION


def change_feed_high_water() -> int:
    return ResourceVersion.objects.aggregate(top=Max("sequence"))["top"] or 0


def reindex_runs_latest() -> tuple[ReindexRun | None, ReindexRun | None]:
    """The reindex run that finished last, whatever its outcome, and the last clean one."""
    runs = ReindexRun.objects.order_by("-finished_at")
    return runs.first(), runs.filter(outcome=ReindexOutcome.OK).first()


def reindex_invalid_files() -> int:
    return ReindexProblem.objects.count()


def published_versions() -> int:
    return ResourceVersion.objects.count()
