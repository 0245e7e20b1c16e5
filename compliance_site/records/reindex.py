"""Reindex: publish new versions from the data repository's git history.

One streaming, first-parent pass over the commits reindex has not seen. A file is parsed only
when its blob differs from the last one read at that path, and a resource gets a new version
only when its own payload hash changes, so whitespace, comments and key order never publish
anything. The whole run is one transaction under a row lock: readers see all of a run or none
of it, and two runs cannot interleave.
"""

import logging
from collections import Counter
from contextlib import closing
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from django.db import DatabaseError, transaction
from django.db.models import Max
from django.utils import timezone

from compliance_site.records import gitlog
from compliance_site.records.documents import (
    SCHEMA_VERSION,
    abbreviation_for_path,
    key_diff,
    payload_hash,
)
from compliance_site.records.models import (
    ChangeSource,
    IndexCursor,
    ReindexOutcome,
    ReindexProblem,
    ReindexRun,
    Resource,
    ResourceType,
    ResourceVersion,
    TrackedFile,
)
from compliance_site.records.parsing import parse_blobs
from compliance_site.records.signals import changes_published, state_verified

logger = logging.getLogger(__name__)

STATES_DIR = "states/"
SHORT_SHA_LENGTH = 12
# The longest repository path reindex tracks (the path columns' length).
MAX_PATH_LENGTH = 255
_BATCH = 500
_INSERT_EVERY = 2000
# How far `last_verified_at` may be after the commit's date: a record verified "today" in one
# time zone and committed in another can be a calendar day ahead. Anything later is a date in
# the future, which would keep the state from ever going stale.
VERIFIED_AT_SKEW = timedelta(days=1)
MAX_PROBLEM_LENGTH = 2000


class ReindexRefused(Exception):
    """The history was rewritten and the operator did not allow it."""


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
    published: Counter = field(default_factory=Counter)
    problems: list[Problem] = field(default_factory=list)
    outstanding: list[Problem] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    rewritten_from: str = ""

    @property
    def ok(self) -> bool:
        return not self.problems and not self.outstanding


@dataclass
class _Live:
    version: int
    payload: Any
    hash: str


@dataclass
class _Run:
    """What one run knows and writes, kept in memory and flushed once at the end."""

    tracked: dict[str, tuple[str, bool]]
    problems: dict[str, Problem]
    live: dict[tuple[str, str], _Live]
    next_sequence: int
    report: ReindexReport
    rows: list[ResourceVersion] = field(default_factory=list)
    latest_rows: dict[tuple[str, str], ResourceVersion] = field(default_factory=dict)
    verified_states: dict[str, tuple[date, int]] = field(default_factory=dict)

    @classmethod
    def load(cls, report: ReindexReport) -> "_Run":
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
        last = ResourceVersion.objects.aggregate(last=Max("sequence"))["last"] or 0
        return cls(tracked, problems, live, last + 1, report)


def reindex(*, repo_path: str, allow_rewritten_history: bool = False) -> ReindexReport:
    """Publish what is new in the repository. Every run, however it ends, leaves a ReindexRun
    (written after the run's transaction, so a failed run is recorded too)."""
    started_at = timezone.now()
    try:
        report = _reindex(repo_path=repo_path, allow_rewritten_history=allow_rewritten_history)
    except ReindexRefused as exc:
        _run_record(started_at, ReindexOutcome.REFUSED, error=str(exc))
        raise
    except Exception as exc:
        _run_record(started_at, ReindexOutcome.FAILED, error=f"{type(exc).__name__}: {exc}")
        raise
    outcome = ReindexOutcome.OK if report.ok else ReindexOutcome.INVALID_FILES
    _run_record(started_at, outcome, report=report)
    return report


def _run_record(
    started_at: datetime, outcome: str, *, report: ReindexReport | None = None, error: str = ""
) -> None:
    report = report or ReindexReport()
    try:
        ReindexRun.objects.create(
            started_at=started_at,
            finished_at=timezone.now(),
            outcome=outcome,
            head=report.head,
            commits_read=report.commits_read,
            versions_published=sum(report.published.values()),
            invalid_versions=len(report.problems),
            invalid_files=len(report.outstanding),
            error=error,
        )
    except DatabaseError:
        # The run's own error (often the same outage) is the one to raise and report.
        logger.exception("could not record the reindex run (%s)", outcome)


def _reindex(*, repo_path: str, allow_rewritten_history: bool) -> ReindexReport:
    report = ReindexReport()
    repo = gitlog.open_repository(repo_path)
    with transaction.atomic():
        cursor = _locked_cursor()
        head = gitlog.head_sha(repo)
        report.head = head
        since = cursor.last_commit_sha or None
        run = _Run.load(report)
        if since != head:
            if since and not gitlog.is_ancestor(repo, since, head):
                if not allow_rewritten_history:
                    raise ReindexRefused(
                        f"the last indexed commit {since[:SHORT_SHA_LENGTH]} is not an ancestor "
                        f"of {head[:SHORT_SHA_LENGTH]}: the history was rewritten. Published "
                        "versions are never renumbered; run again with "
                        "--allow-rewritten-history to publish the new history's changes on top."
                    )
                report.rewritten_from = since
                since = gitlog.merge_base(repo, since, head)
            commits = list(gitlog.iter_commits(repo, since=since, head=head, path=STATES_DIR))
            report.commits_read = len(commits)
            tracked = {path: blob for path, (blob, _v) in run.tracked.items()}
            steps = _plan(commits, tracked, report.notices)
            _apply(run, repo_path, steps)
            _flush(run)
            cursor.last_commit_sha = head
            cursor.save()
        report.outstanding = sorted(run.problems.values(), key=lambda p: p.path)
    return report


def _locked_cursor() -> IndexCursor:
    IndexCursor.objects.get_or_create(name="default")
    return IndexCursor.objects.select_for_update().get(name="default")


@dataclass(frozen=True)
class _Step:
    """One thing a commit did to one state file: a new blob to read, or the path going away."""

    commit: gitlog.Commit
    path: str
    blob_sha: str | None
    renamed_to: str | None = None


def _plan(commits: list[gitlog.Commit], tracked: dict[str, str], notices: list[str]) -> list[_Step]:
    """The steps of a run, in order. A blob equal to the last one read at its path is skipped
    here, before anything is read."""
    steps = []
    for commit in commits:
        for change in commit.changes:
            old_path = change.old_path or ""
            if change.status == "R" and _is_state_path(old_path):
                tracked.pop(old_path, None)
                steps.append(_Step(commit, old_path, None, renamed_to=change.path))
            if len(change.path) > MAX_PATH_LENGTH:
                # No jurisdiction has such a name, and no column could hold it.
                notices.append(
                    f"ignored a path of {len(change.path)} characters in "
                    f"{commit.sha[:SHORT_SHA_LENGTH]}: not a state file"
                )
                continue
            if not _is_state_path(change.path):
                continue
            if change.blob_sha is None:
                tracked.pop(change.path, None)
                steps.append(_Step(commit, change.path, None))
            elif tracked.get(change.path) != change.blob_sha:
                tracked[change.path] = change.blob_sha
                steps.append(_Step(commit, change.path, change.blob_sha))
    return steps


def _is_state_path(path: str) -> bool:
    return len(path) <= MAX_PATH_LENGTH and abbreviation_for_path(path) is not None


def _apply(run: _Run, repo_path: str, steps: list[_Step]) -> None:
    reads = [(step.path, step.blob_sha) for step in steps if step.blob_sha]
    with closing(parse_blobs(repo_path, reads)) as parsed:
        for step in steps:
            if step.blob_sha is None:
                _forget_path(run, step)
                continue
            result = next(parsed)
            if result.payload is None:
                _record_problem(run, step, result.error, result.schema_path)
                continue
            if future := _verified_in_future(step, result.payload):
                _record_problem(run, step, future, "properties/last_verified_at")
                continue
            run.tracked[step.path] = (step.blob_sha, True)
            run.problems.pop(step.path, None)
            key = abbreviation_for_path(step.path)
            _publish(run, step.commit, step.path, key, result.payload)
            if len(run.rows) >= _INSERT_EVERY:
                _insert_versions(run)


def _verified_in_future(step: _Step, payload: dict) -> str:
    """The problem with a `last_verified_at` later than its commit allows, or ""."""
    verified_on = date.fromisoformat(payload["last_verified_at"])
    # The UTC day of the commit: its own offset may be out of range or made up.
    committed_on = step.commit.committed_at.astimezone(UTC).date()
    if verified_on <= committed_on + VERIFIED_AT_SKEW:
        return ""
    return (
        f"{step.path}: last_verified_at: {verified_on.isoformat()} is after the commit's date "
        f"({committed_on.isoformat()} UTC) by more than {VERIFIED_AT_SKEW.days} day"
    )


def _record_problem(run: _Run, step: _Step, message: str, schema_path: str) -> None:
    # A validator's message can quote the whole offending value (every extra key of a
    # 512 KiB file); the start says what is wrong.
    if len(message) > MAX_PROBLEM_LENGTH:
        message = message[: MAX_PROBLEM_LENGTH - 1] + "…"
    problem = Problem(step.path, step.commit.sha, message, schema_path[:500])
    run.tracked[step.path] = (step.blob_sha, False)
    run.problems[step.path] = problem
    run.report.problems.append(problem)


def _forget_path(run: _Run, step: _Step) -> None:
    run.tracked.pop(step.path, None)
    run.problems.pop(step.path, None)
    action = f"renamed to {step.renamed_to}" if step.renamed_to else "deleted"
    run.report.notices.append(
        f"{step.path} was {action} in {step.commit.sha[:SHORT_SHA_LENGTH]}; "
        "versions already published under it stay live"
    )


def _publish(run: _Run, commit: gitlog.Commit, path: str, key: str, payload: dict) -> None:
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
            _version_row(run, commit, path, resource_type, key, version, part, digest, live)
        )
        run.live[(resource_type, key)] = _Live(version, part, digest)
        run.report.published[resource_type] += 1
        if resource_type == ResourceType.STATE:
            verified_on = date.fromisoformat(payload["last_verified_at"])
            run.verified_states[key] = (verified_on, version)


def _version_row(run: _Run, commit, path, resource_type, key, version, payload, digest, live):
    committed_at = commit.committed_at
    offset = committed_at.utcoffset()
    row = ResourceVersion(
        resource_type=resource_type,
        resource_key=key,
        version=version,
        sequence=run.next_sequence,
        payload=payload,
        payload_hash=digest,
        payload_schema_version=SCHEMA_VERSION,
        yaml_path=path,
        commit_sha=commit.sha,
        git_sha=commit.sha[:SHORT_SHA_LENGTH],
        # Stored in UTC: PostgreSQL refuses offsets beyond ±15:59, which git commits can claim.
        committed_at=committed_at.astimezone(UTC),
        committed_offset_minutes=int(offset.total_seconds() // 60) if offset else 0,
        released_at=committed_at.date(),
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


def _insert_versions(run: _Run) -> None:
    """Write the pending rows (in batches during a run, so the database works while the
    remaining files are parsed)."""
    ResourceVersion.objects.bulk_create(run.rows, batch_size=_BATCH)
    for row in run.rows:
        run.latest_rows[(row.resource_type, row.resource_key)] = row
    run.rows.clear()


def _flush(run: _Run) -> None:
    _insert_versions(run)
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
        changes_published.send(sender=ResourceVersion, last_sequence=run.next_sequence - 1)
