"""What one reindex run publishes: version rows, their dates, and the writes at the end.

A run keeps what it knows in memory (`PublishRun`) and writes version rows in batches. Each
batch is written under a savepoint; when the database refuses a row (IntegrityError,
DataError), the batch is undone and replayed one file version at a time, so the refused
version becomes that file's problem and the run goes on with every other file.

Dates: a commit's date is written by whoever made the commit. Git's own committer date is kept
in `git_committed_at`; the published `committed_at` is that date clamped to the time of
publication and never earlier than the previous published event's, so it is non-decreasing in
publication order and a client that syncs with `since` loses nothing. After the first import,
`released_at` is never before the day of publication, so `as_of` answers for past days never
change (docs/decisions.md, "Dates nobody can forge into the feed").
"""

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime
from typing import Any, TypeVar

from django.db import DataError, IntegrityError, transaction
from django.db.models import Max
from django.utils import timezone

from compliance_site.records import gitlog
from compliance_site.records.documents import key_diff, payload_hash
from compliance_site.records.models import (
    ChangeSource,
    ReindexProblem,
    Resource,
    ResourceType,
    ResourceVersion,
    TrackedFile,
)
from compliance_site.records.signals import changes_published, state_verified
from shared.untrusted_text import without_unstorable

SHORT_SHA_LENGTH = 12
MAX_PROBLEM_LENGTH = 2000
_BATCH = 500
Unit = TypeVar("Unit")


@dataclass(frozen=True)
class Problem:
    path: str
    commit_sha: str
    message: str
    schema_path: str = ""


@dataclass
class ReindexReport:
    head: str = ""
    commits_read: int = 0
    published: Counter[str] = field(default_factory=Counter)
    problems: list[Problem] = field(default_factory=list)
    outstanding: list[Problem] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    rewritten_from: str = ""

    @property
    def ok(self) -> bool:
        return not self.problems and not self.outstanding


@dataclass(frozen=True)
class _Live:
    version: int
    payload: Any
    hash: str


@dataclass
class _Mark:
    """What a run knew before a batch, to replay the batch one version at a time."""

    tracked: dict[str, tuple[str, bool]]
    problems: dict[str, Problem]
    live: dict[tuple[str, str], _Live]
    latest_rows: dict[tuple[str, str], ResourceVersion]
    verified_states: dict[str, tuple[date, int]]
    next_sequence: int
    floor: datetime | None
    published: Counter[str]
    reported: int
    notices: int


@dataclass
class PublishRun:
    """What one run knows and writes, kept in memory and flushed once at the end."""

    tracked: dict[str, tuple[str, bool]]
    problems: dict[str, Problem]
    live: dict[tuple[str, str], _Live]
    next_sequence: int
    report: ReindexReport
    # The time of publication: the latest date a version may carry.
    now: datetime
    # The latest committed_at published so far: the earliest the next one may carry.
    floor: datetime | None
    # Before anything is published, a history is imported with its own dates.
    first_import: bool
    rows: list[ResourceVersion] = field(default_factory=list)
    latest_rows: dict[tuple[str, str], ResourceVersion] = field(default_factory=dict)
    verified_states: dict[str, tuple[date, int]] = field(default_factory=dict)

    @classmethod
    def load(cls, report: ReindexReport) -> "PublishRun":
        tracked = {f.path: (f.blob_sha, f.valid) for f in TrackedFile.objects.all()}
        problems = {
            p.path: Problem(p.path, p.commit_sha, p.message, p.schema_path)
            for p in ReindexProblem.objects.all()
        }
        live = {
            (r.resource_type, r.resource_key): _Live(
                r.current.version, r.current.payload, r.current.payload_hash
            )
            for r in Resource.objects.select_related("current")
        }
        latest = ResourceVersion.objects.aggregate(
            sequence=Max("sequence"), committed_at=Max("committed_at")
        )
        return cls(
            tracked,
            problems,
            live,
            (latest["sequence"] or 0) + 1,
            report,
            now=timezone.now(),
            floor=latest["committed_at"],
            first_import=latest["sequence"] is None,
        )

    def mark(self) -> _Mark:
        return _Mark(
            dict(self.tracked),
            dict(self.problems),
            dict(self.live),
            dict(self.latest_rows),
            dict(self.verified_states),
            self.next_sequence,
            self.floor,
            Counter(self.report.published),
            len(self.report.problems),
            len(self.report.notices),
        )

    def restore(self, mark: _Mark) -> None:
        self.tracked, self.problems = dict(mark.tracked), dict(mark.problems)
        self.live, self.latest_rows = dict(mark.live), dict(mark.latest_rows)
        self.verified_states = dict(mark.verified_states)
        self.next_sequence, self.floor = mark.next_sequence, mark.floor
        self.report.published = Counter(mark.published)
        del self.report.problems[mark.reported :]
        del self.report.notices[mark.notices :]
        self.rows.clear()

    def record_problem(self, path: str, blob_sha: str | None, problem: Problem) -> None:
        # A validator's message can quote the whole offending value (every extra key of a
        # 512 KiB file); the start says what is wrong. It is stored, so it holds nothing a
        # column cannot.
        message = without_unstorable(problem.message)
        if len(message) > MAX_PROBLEM_LENGTH:
            message = message[: MAX_PROBLEM_LENGTH - 1] + "…"
        problem = replace(
            problem, message=message, schema_path=without_unstorable(problem.schema_path)[:500]
        )
        if blob_sha is not None:
            self.tracked[path] = (blob_sha, False)
        self.problems[path] = problem
        self.report.problems.append(problem)


def publish_dates(run: PublishRun, commit: gitlog.Commit) -> tuple[datetime, date]:
    """The committed_at and released_at a version from `commit` is published with."""
    claimed = commit.committed_at
    published = min(claimed, run.now)
    if run.floor is not None:
        published = max(published, run.floor)
    run.floor = published
    released = published.astimezone(claimed.tzinfo).date()
    if not run.first_import:
        released = max(released, run.now.astimezone(UTC).date())
    return published, released


def publish(
    run: PublishRun,
    commit: gitlog.Commit,
    path: str,
    key: str,
    payload: dict[str, Any],
    major: str,
) -> None:
    """Queue the new versions one valid file version makes (state, citation, ESA program),
    written under schema major `major`."""
    parts = (
        (ResourceType.STATE, payload),
        (ResourceType.CITATION, {"source_urls": payload["sources"]}),
        (ResourceType.ESA_PROGRAM, payload.get("esa_program")),
    )
    for resource_type, part in parts:
        live = run.live.get((resource_type, key))
        if part is None and (live is None or live.payload is None):
            continue  # no ESA program now, and none published before
        digest = payload_hash(part)
        if live is not None and live.hash == digest:
            continue
        version = live.version + 1 if live else 1
        run.rows.append(
            _version_row(
                run, commit, path, resource_type, key, version, part, digest, live, major=major
            )
        )
        run.live[(resource_type, key)] = _Live(version, part, digest)
        run.report.published[resource_type] += 1
        if resource_type == ResourceType.STATE:
            verified_on = date.fromisoformat(payload["last_verified_at"])
            run.verified_states[key] = (verified_on, version)


def _version_row(
    run: PublishRun,
    commit: gitlog.Commit,
    path: str,
    resource_type: str,
    key: str,
    version: int,
    payload: Any,
    digest: str,
    live: _Live | None,
    *,
    major: str,
) -> ResourceVersion:
    committed_at, released_at = publish_dates(run, commit)
    offset = commit.committed_at.utcoffset()
    row = ResourceVersion(
        resource_type=resource_type,
        resource_key=key,
        version=version,
        sequence=run.next_sequence,
        payload=payload,
        payload_hash=digest,
        payload_schema_version=major,
        yaml_path=path,
        commit_sha=commit.sha,
        git_sha=commit.sha[:SHORT_SHA_LENGTH],
        # Stored in UTC: PostgreSQL refuses offsets beyond ±15:59, which git commits can claim.
        committed_at=committed_at.astimezone(UTC),
        git_committed_at=commit.committed_at.astimezone(UTC),
        committed_offset_minutes=int(offset.total_seconds() // 60) if offset else 0,
        released_at=released_at,
        committed_by=commit.author,
        change_summary=commit.message,
        source=_change_source(commit.change_source),
        diff=key_diff(live.payload if live else None, payload),
    )
    run.next_sequence += 1
    return row


def _change_source(trailer_value: str) -> str:
    value = trailer_value.strip().lower()
    return value if value in ChangeSource.values else ChangeSource.HUMAN


def insert_versions(run: PublishRun) -> None:
    """Write the pending rows under a savepoint; the database's refusal is raised."""
    with transaction.atomic():
        ResourceVersion.objects.bulk_create(run.rows, batch_size=_BATCH)
    for row in run.rows:
        run.latest_rows[(row.resource_type, row.resource_key)] = row
    run.rows.clear()


def insert_or_isolate(
    run: PublishRun,
    mark: _Mark,
    units: list[Unit],
    apply: Callable[[Unit], None],
    refused: Callable[[Unit, Exception], None],
) -> None:
    """Write the rows `units` queued since `mark`. When the database refuses one, replay the
    units one at a time from `mark`: each refused unit is handed to `refused`."""
    try:
        insert_versions(run)
        return
    except (IntegrityError, DataError):
        run.restore(mark)
    for unit in units:
        before = run.mark()
        apply(unit)
        try:
            insert_versions(run)
        except (IntegrityError, DataError) as exc:
            run.restore(before)
            refused(unit, exc)


def flush(run: PublishRun) -> None:
    Resource.objects.bulk_create(
        [
            Resource(resource_type=t, resource_key=k, current=row)
            for (t, k), row in run.latest_rows.items()
        ],
        update_conflicts=True,
        unique_fields=["resource_type", "resource_key"],
        update_fields=["current"],
        batch_size=_BATCH,
    )
    TrackedFile.objects.exclude(path__in=run.tracked.keys()).delete()
    TrackedFile.objects.bulk_create(
        [TrackedFile(path=p, blob_sha=b, valid=v) for p, (b, v) in run.tracked.items()],
        update_conflicts=True,
        unique_fields=["path"],
        update_fields=["blob_sha", "valid"],
        batch_size=_BATCH,
    )
    ReindexProblem.objects.exclude(path__in=run.problems.keys()).delete()
    ReindexProblem.objects.bulk_create(
        [
            ReindexProblem(
                path=p.path, commit_sha=p.commit_sha, schema_path=p.schema_path, message=p.message
            )
            for p in run.problems.values()
        ],
        update_conflicts=True,
        unique_fields=["path"],
        update_fields=["commit_sha", "schema_path", "message"],
    )
    for key, (verified_on, version) in run.verified_states.items():
        # Apps above records (monitoring clears review flags) listen; inside the run's
        # transaction, so a failing receiver publishes nothing.
        state_verified.send(
            sender=ResourceVersion, state_abbreviation=key, verified_on=verified_on, version=version
        )
    if run.latest_rows:
        # Webhooks fan out from it after the commit (compliance_site/webhooks/receivers.py).
        changes_published.send(sender=ResourceVersion, last_sequence=run.next_sequence - 1)
