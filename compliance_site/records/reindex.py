"""Reindex: publish new versions from the data repository's git history.

One streaming, first-parent pass over the commits reindex has not seen. A file is parsed only
when its blob differs from the last one read at that path, and a resource gets a new version
only when its own payload hash changes, so whitespace, comments and key order never publish
anything. The whole run is one transaction under a row lock: readers see all of a run or none
of it, and two runs cannot interleave.
"""

import logging
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

import git
from django.db import DatabaseError, transaction
from django.utils import timezone

from compliance_site.records import gitlog
from compliance_site.records.documents import FIRST_SCHEMA_VERSION, abbreviation_for_path
from compliance_site.records.models import (
    IndexCursor,
    ReindexOutcome,
    ReindexRun,
)
from compliance_site.records.parsing import Parsed, parse_blobs
from compliance_site.records.publishing import (
    SHORT_SHA_LENGTH,
    Problem,
    PublishRun,
    ReindexReport,
    flush,
    insert_or_isolate,
    publish,
)
from compliance_site.records.schemadecl import (
    DECLARATION_PATH,
    MAX_DECLARATION_BYTES,
    InvalidDeclaration,
    declared_major,
)

logger = logging.getLogger(__name__)

STATES_DIR = "states/"
# The longest repository path reindex tracks (the path columns' length).
MAX_PATH_LENGTH = 255
_INSERT_EVERY = 2000
# How far `last_verified_at` may be after the day of publication: a record verified "today" in
# one time zone can be a calendar day ahead of UTC. Anything later is a date in the future,
# which would keep the state from ever going stale. The commit's own date is not the measure:
# whoever made the commit chose it.
VERIFIED_AT_SKEW = timedelta(days=1)

__all__ = ["Problem", "ReindexRefused", "ReindexReport", "reindex"]


class ReindexRefused(Exception):
    """The history was rewritten and the operator did not allow it."""


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
        run = PublishRun.load(report)
        if since != head:
            rewritten = since is not None and not gitlog.is_ancestor(repo, since, head)
            if rewritten:
                assert since is not None  # only a run with an indexed commit is rewritten
                if not allow_rewritten_history:
                    raise ReindexRefused(
                        f"the last indexed commit {since[:SHORT_SHA_LENGTH]} is not an ancestor "
                        f"of {head[:SHORT_SHA_LENGTH]}: the history was rewritten. Published "
                        "versions are never renumbered; run again with "
                        "--allow-rewritten-history to publish the new history's changes on top."
                    )
                report.rewritten_from = since
                since = gitlog.merge_base(repo, since, head)
            paths = (STATES_DIR, DECLARATION_PATH)
            commits = list(gitlog.iter_commits(repo, since=since, head=head, paths=paths))
            report.commits_read = len(commits)
            tracked = {path: blob for path, (blob, _v) in run.tracked.items()}
            # The cursor knows the major at its own commit; after a rewrite the run starts at
            # the merge base, whose declaration is read.
            major = _major_at(repo, since, cursor) if rewritten else cursor.schema_version
            planner = _Planner(repo, tracked, major, report.notices)
            steps = planner.plan(commits)
            if rewritten:
                # Walking merge-base..head misses what only the dropped commits changed: what
                # HEAD holds is the truth, whatever was published from the old history.
                steps += planner.reconcile(gitlog.commit_at(repo, head))
            planner.record_declaration(run)
            _apply(run, repo_path, steps)
            flush(run)
            cursor.last_commit_sha = head
            cursor.schema_version = planner.major
            cursor.save()
        report.outstanding = sorted(run.problems.values(), key=lambda p: p.path)
    return report


def _locked_cursor() -> IndexCursor:
    IndexCursor.objects.get_or_create(name="default")
    return IndexCursor.objects.select_for_update().get(name="default")


def _major_at(repo: git.Repo, sha: str | None, cursor: IndexCursor) -> str:
    """The schema major in force at commit `sha` (where this run starts)."""
    if sha is None:
        return FIRST_SCHEMA_VERSION
    try:
        content = gitlog.blob_at(repo, sha, DECLARATION_PATH, limit=MAX_DECLARATION_BYTES)
        return declared_major(content)
    except InvalidDeclaration:
        # Reported when that commit was indexed; the major before it stayed in force.
        return cursor.schema_version


@dataclass(frozen=True)
class _Step:
    """One thing a commit did to one state file: a new blob to read (under schema `major`),
    the path going away, or (after a history rewrite) a path HEAD no longer holds."""

    commit: gitlog.Commit
    path: str
    blob_sha: str | None
    major: str = FIRST_SCHEMA_VERSION
    renamed_to: str | None = None
    missing_at_head: bool = False


class _Planner:
    """The steps of a run, in order. A blob equal to the last one read at its path is skipped
    here, before anything is read, unless the schema major changed at its commit."""

    def __init__(
        self, repo: git.Repo, tracked: dict[str, str], major: str, notices: list[str]
    ) -> None:
        self.repo = repo
        self.tracked = tracked
        self.major = major
        self.notices = notices
        self.declaration_problems: list[Problem] = []
        # Whether the last declaration this run read was valid; None when it read none.
        self.declaration_valid: bool | None = None

    def plan(self, commits: list[gitlog.Commit]) -> list[_Step]:
        steps: list[_Step] = []
        for commit in commits:
            bumped = self._declaration(commit)
            changed = set()
            for change in commit.changes:
                changed.add(change.path)
                steps.extend(self._change_steps(commit, change))
            if bumped:
                # Every file must follow the new major from this commit on: the ones the
                # commit did not touch are read again under it.
                for path, blob in gitlog.tree_blobs(self.repo, commit.sha, STATES_DIR).items():
                    if path not in changed and _is_state_path(path):
                        self.tracked[path] = blob
                        steps.append(_Step(commit, path, blob, self.major))
        return steps

    def reconcile(self, head: gitlog.Commit) -> list[_Step]:
        """Steps that make every tracked file's live record what HEAD holds."""
        at_head = {
            path: blob
            for path, blob in gitlog.tree_blobs(self.repo, head.sha, STATES_DIR).items()
            if _is_state_path(path)
        }
        steps = [
            _Step(head, path, blob, self.major)
            for path, blob in sorted(at_head.items())
            if self.tracked.get(path) != blob
        ]
        steps += [
            _Step(head, path, None, self.major, missing_at_head=True)
            for path in sorted(self.tracked.keys() - at_head.keys())
        ]
        self.tracked.update(at_head)
        return steps

    def record_declaration(self, run: PublishRun) -> None:
        for problem in self.declaration_problems:
            run.record_problem(DECLARATION_PATH, None, problem)
        if self.declaration_valid is True:
            run.problems.pop(DECLARATION_PATH, None)

    def _declaration(self, commit: gitlog.Commit) -> bool:
        """Follow a change of `schema.yaml` in `commit`; True when the major changed."""
        if not any(change.path == DECLARATION_PATH for change in commit.changes):
            return False
        content = gitlog.blob_at(
            self.repo, commit.sha, DECLARATION_PATH, limit=MAX_DECLARATION_BYTES
        )
        try:
            major = declared_major(content)
        except InvalidDeclaration as exc:
            self.declaration_valid = False
            message = f"{exc.message}; schema major {self.major} stays in force"
            self.declaration_problems.append(Problem(DECLARATION_PATH, commit.sha, message))
            return False
        self.declaration_valid = True
        if major == self.major:
            return False
        self.notices.append(
            f"{commit.sha[:SHORT_SHA_LENGTH]} moves the state files from schema major "
            f"{self.major} to {major}"
        )
        self.major = major
        return True

    def _change_steps(self, commit: gitlog.Commit, change: gitlog.FileChange) -> list[_Step]:
        steps = []
        old_path = change.old_path or ""
        if change.status == "R" and _is_state_path(old_path):
            self.tracked.pop(old_path, None)
            steps.append(_Step(commit, old_path, None, self.major, renamed_to=change.path))
        if len(change.path) > MAX_PATH_LENGTH:
            # No jurisdiction has such a name, and no column could hold it.
            self.notices.append(
                f"ignored a path of {len(change.path)} characters in "
                f"{commit.sha[:SHORT_SHA_LENGTH]}: not a state file"
            )
            return steps
        if not _is_state_path(change.path):
            return steps
        if change.blob_sha is None:
            self.tracked.pop(change.path, None)
            steps.append(_Step(commit, change.path, None, self.major))
        elif self.tracked.get(change.path) != change.blob_sha:
            self.tracked[change.path] = change.blob_sha
            steps.append(_Step(commit, change.path, change.blob_sha, self.major))
        return steps


def _is_state_path(path: str) -> bool:
    return len(path) <= MAX_PATH_LENGTH and abbreviation_for_path(path) is not None


_Unit = tuple[_Step, Parsed | None]


def _apply(run: PublishRun, repo_path: str, steps: list[_Step]) -> None:
    reads = [(step.path, step.blob_sha, step.major) for step in steps if step.blob_sha]
    with closing(parse_blobs(repo_path, reads)) as parsed:
        units: list[_Unit] = []
        mark = run.mark()
        for step in steps:
            unit = (step, next(parsed) if step.blob_sha else None)
            units.append(unit)
            _apply_unit(run, unit)
            if len(run.rows) >= _INSERT_EVERY:
                insert_or_isolate(run, mark, units, lambda u: _apply_unit(run, u), _refused(run))
                units, mark = [], run.mark()
        insert_or_isolate(run, mark, units, lambda u: _apply_unit(run, u), _refused(run))


def _apply_unit(run: PublishRun, unit: _Unit) -> None:
    step, result = unit
    if step.missing_at_head:
        _missing_at_head(run, step)
        return
    if result is None:
        _forget_path(run, step)
        return
    if result.payload is None:
        _record_problem(run, step, result.error, result.schema_path)
        return
    if future := _verified_in_future(run, step, result.payload):
        _record_problem(run, step, future, "properties/last_verified_at")
        return
    assert step.blob_sha is not None  # a step with a parse result has a blob (_apply)
    run.tracked[step.path] = (step.blob_sha, True)
    run.problems.pop(step.path, None)
    key = abbreviation_for_path(step.path)
    assert key is not None  # steps are planned for state paths only (_is_state_path)
    publish(run, step.commit, step.path, key, result.payload, step.major)


def _refused(run: PublishRun) -> Callable[[_Unit, Exception], None]:
    def refused(unit: _Unit, exc: Exception) -> None:
        step, _result = unit
        message = f"{step.path}: the database refused this version: {exc}"
        _record_problem(run, step, message, "")

    return refused


def _verified_in_future(run: PublishRun, step: _Step, payload: dict[str, Any]) -> str:
    """The problem with a `last_verified_at` later than the day of publication allows, or ""."""
    verified_on = date.fromisoformat(payload["last_verified_at"])
    published_on = run.now.astimezone(UTC).date()
    if verified_on <= published_on + VERIFIED_AT_SKEW:
        return ""
    return (
        f"{step.path}: last_verified_at: {verified_on.isoformat()} is after the day of "
        f"publication ({published_on.isoformat()} UTC) by more than {VERIFIED_AT_SKEW.days} day"
    )


def _record_problem(run: PublishRun, step: _Step, message: str, schema_path: str) -> None:
    problem = Problem(step.path, step.commit.sha, message, schema_path)
    run.record_problem(step.path, step.blob_sha, problem)


def _forget_path(run: PublishRun, step: _Step) -> None:
    run.tracked.pop(step.path, None)
    run.problems.pop(step.path, None)
    action = f"renamed to {step.renamed_to}" if step.renamed_to else "deleted"
    run.report.notices.append(
        f"{step.path} was {action} in {step.commit.sha[:SHORT_SHA_LENGTH]}; "
        "versions already published under it stay live"
    )


def _missing_at_head(run: PublishRun, step: _Step) -> None:
    """A file the old history published and the rewritten one does not hold. Published
    versions are never withdrawn, so its last version stays live; a problem says so until a
    valid version of the file is committed again."""
    run.tracked.pop(step.path, None)
    message = (
        f"{step.path} is not in {step.commit.sha[:SHORT_SHA_LENGTH]} after the history was "
        "rewritten; its last published version stays live until the file is committed again"
    )
    run.problems[step.path] = Problem(step.path, step.commit.sha, message)
    run.report.problems.append(run.problems[step.path])
