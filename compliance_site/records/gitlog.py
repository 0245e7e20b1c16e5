"""One streaming pass over the data repository's first-parent history.

`git log --raw` gives, per commit, its metadata, its `Change-Source` trailer and the blob ids of
every file it touched (rename-aware, merges diffed against their first parent) in a single
process, so reindex never walks the history once per file.

Commit metadata is written by whoever made the commit, so it is read as hostile: every field is
NUL-terminated (`-z` and `%x00`), and git never prints a NUL inside a field (it stops a name or
message at one), so no byte in a message or author name can shift the fields. The commit time is
read raw, as seconds since the epoch, which is the true instant whatever offset the commit
claims; the offset is only how the time is shown.
"""

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from typing import IO

import git

# Field order of each commit record; the message comes last because it is the longest.
# `%cd` with --date=raw is "<seconds> <offset>" as stored: git converts nothing, where %ci and
# %cI make `git log` itself fail on some offsets ("Timestamp before Unix epoch").
_FIELDS = ("%H", "%cd", "%an", "%(trailers:key=Change-Source,valueonly,separator=%x2C)")
_FORMAT = "%x00".join((*_FIELDS, "%B"))
_FIELD_COUNT = len(_FIELDS) + 1
_NULL_SHA = "0" * 40
_CHUNK = 1 << 16
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_EARLIEST = datetime(1, 1, 2, tzinfo=UTC)
_LATEST = datetime(9999, 12, 30, tzinfo=UTC)
# git writes the offset as ±HHMM but stores whatever number the commit object holds.
_OFFSET = re.compile(r"([+-])(\d{1,9})")
# C0 and C1 controls (tab and newline are kept in messages): a terminal, a log line or an XML
# consumer of the change feed would interpret or refuse them.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_LINE_BREAKS = re.compile("[\t\n]")
# A trailer line of the key the reindex reads (git compares trailer keys case-insensitively).
_CHANGE_SOURCE_LINE = re.compile(r"(?i)change-source\s*:")
AUTHOR_MAX_LENGTH = 255


@dataclass(frozen=True)
class FileChange:
    status: str  # A, M, D, R, C or T (git's letters, without the similarity score)
    path: str  # the path after the change
    old_path: str | None  # the path before a rename or copy
    blob_sha: str | None  # None when the file was deleted


@dataclass(frozen=True)
class Commit:
    sha: str
    author: str
    # The true instant, shown in the commit's own offset when that offset is one a clock can
    # have (under 24 hours); otherwise in UTC, and `offset_out_of_range` is True.
    committed_at: datetime
    change_source: str
    message: str
    changes: tuple[FileChange, ...]
    offset_out_of_range: bool = False


class HistoryError(Exception):
    """The repository cannot be read (no such path, not a git repository, no commits)."""


def open_repository(path: str) -> git.Repo:
    try:
        return git.Repo(path)
    except (git.NoSuchPathError, git.InvalidGitRepositoryError) as exc:
        raise HistoryError(f"{path} is not a git repository") from exc


def head_sha(repo: git.Repo) -> str:
    try:
        return repo.head.commit.hexsha
    except ValueError as exc:
        raise HistoryError("the data repository has no commits yet") from exc


def is_ancestor(repo: git.Repo, ancestor: str, descendant: str) -> bool:
    try:
        repo.git.merge_base("--is-ancestor", ancestor, descendant)
    except git.GitCommandError:
        # Exit 1 (not an ancestor) and 128 (the commit no longer exists) both mean the
        # history we indexed is not a prefix of this one.
        return False
    return True


def merge_base(repo: git.Repo, a: str, b: str) -> str | None:
    try:
        return repo.git.merge_base(a, b).strip() or None
    except git.GitCommandError:
        return None


def iter_commits(
    repo: git.Repo, *, since: str | None, head: str, paths: tuple[str, ...]
) -> Iterator[Commit]:
    """Commits after `since` (exclusive) up to `head`, oldest first, that touch `paths`."""
    revision = f"{since}..{head}" if since else head
    process = repo.git.log(
        "--first-parent",
        "--diff-merges=first-parent",
        "--reverse",
        "--raw",
        "-z",
        "-M",
        "--no-abbrev",
        "--no-color",
        "--encoding=UTF-8",
        "--date=raw",
        f"--format={_FORMAT}",
        revision,
        "--",
        *paths,
        as_process=True,
    )
    try:
        yield from parse_log(_tokens(process.proc.stdout))
    finally:
        process.wait()


def commit_at(repo: git.Repo, sha: str) -> Commit:
    """One commit's metadata, without its changes."""
    output = repo.git.log(
        "-1",
        "-z",
        "--no-color",
        "--encoding=UTF-8",
        "--date=raw",
        f"--format={_FORMAT}",
        sha,
        stdout_as_string=False,
    )
    return next(parse_log(iter(output.split(b"\x00"))))


def tree_blobs(repo: git.Repo, sha: str, prefix: str) -> dict[str, str]:
    """Path -> blob id of every file under `prefix` in the tree of commit `sha`."""
    output = repo.git.ls_tree("-r", "-z", "--full-tree", sha, "--", prefix, stdout_as_string=False)
    blobs = {}
    for entry in output.split(b"\x00"):
        meta, _, path = entry.partition(b"\t")
        fields = meta.split(b" ")
        if len(fields) == 3 and fields[1] == b"blob":
            blobs[_text(path)] = fields[2].decode("ascii")
    return blobs


def blob_at(repo: git.Repo, sha: str, path: str, *, limit: int) -> bytes | None:
    """The content of `path` in commit `sha`, None when there is no such file, or the first
    `limit` + 1 bytes of a larger one (so a caller can refuse it without holding it all)."""
    blob_sha = tree_blobs(repo, sha, path).get(path)
    if blob_sha is None:
        return None
    stream = repo.odb.stream(bytes.fromhex(blob_sha))
    content: bytes = stream.read(limit + 1)
    return content


def _tokens(stream: IO[bytes]) -> Iterator[bytes]:
    pending = b""
    while chunk := stream.read(_CHUNK):
        pending += chunk
        *complete, pending = pending.split(b"\x00")
        yield from complete
    if pending:
        yield pending


def parse_log(tokens: Iterator[bytes]) -> Iterator[Commit]:
    """Commits from the NUL-separated tokens of `git log -z --raw --format=<_FORMAT>`.

    A record is the format's fields, then the commit terminator, then its raw entries: a meta
    token starting with ":" followed by one path (two for a rename or copy). Fields come by
    count, so a message that looks like a raw entry is still a message.
    """
    tokens = iter(tokens)
    token = next(tokens, None)
    while token is not None:
        if not token.strip(b"\n"):
            token = next(tokens, None)
            continue
        fields = [token]
        for _ in range(_FIELD_COUNT - 1):
            fields.append(next(tokens, b""))
        changes: list[FileChange] = []
        token = next(tokens, None)
        while token is not None:
            meta = token.strip(b"\n")
            if not meta:
                token = next(tokens, None)
                continue
            if not meta.startswith(b":"):
                break  # the next commit's SHA
            letter, new_sha = _raw_meta(meta)
            if letter in "RC":
                old_path, new_path = _text(next(tokens, b"")), _text(next(tokens, b""))
            else:
                old_path, new_path = None, _text(next(tokens, b""))
            blob = None if letter == "D" or new_sha == _NULL_SHA else new_sha
            changes.append(FileChange(letter, new_path, old_path, blob))
            token = next(tokens, None)
        yield _commit(fields, tuple(changes))


def _raw_meta(meta: bytes) -> tuple[str, str]:
    _old_mode, _new_mode, _old_sha, new_sha, status = meta[1:].decode("ascii").split(" ")
    return status[0], new_sha


def _commit(fields: list[bytes], changes: tuple[FileChange, ...]) -> Commit:
    sha, raw_date, author, trailer, message = (_text(field) for field in fields)
    committed_at, out_of_range = commit_time(raw_date)
    return Commit(
        sha=sha.strip("\n"),
        author=clean_text(author, multiline=False)[:AUTHOR_MAX_LENGTH],
        committed_at=committed_at,
        change_source=_last_trailer_value(trailer),
        message=without_change_source(clean_text(message, multiline=True)),
        changes=changes,
        offset_out_of_range=out_of_range,
    )


def without_change_source(message: str) -> str:
    """The message without its `Change-Source:` trailer lines: the trailer is read into
    `change_source`, and a change summary shown to integrators is the author's words. Only the
    last paragraph after the subject holds trailers (git's rule); a line like it elsewhere is
    the author's."""
    body, separator, last = message.strip().rpartition("\n\n")
    if not separator:
        return last
    kept = [line for line in last.split("\n") if not _CHANGE_SOURCE_LINE.match(line)]
    if not any(line.strip() for line in kept):
        return body.strip()
    trailers = "\n".join(kept)
    return f"{body}{separator}{trailers}".strip()


def commit_time(raw_date: str) -> tuple[datetime, bool]:
    """The commit instant from git's raw date ("<seconds> <±HHMM>") in its own offset, and
    whether that offset was out of range (24 hours or more, 60 minutes or more, unreadable)
    and replaced by UTC.

    An instant outside what a datetime holds (years 1 to 9999) is clamped to that range; a time
    git cannot read at all (it prints nothing for a negative one) is the Unix epoch.
    """
    seconds, _, offset = raw_date.strip().partition(" ")
    try:
        instant = _EPOCH + timedelta(seconds=int(seconds))
    except ValueError:
        instant = _EPOCH
    except OverflowError:
        instant = _LATEST if not seconds.startswith("-") else _EARLIEST
    instant = min(max(instant, _EARLIEST), _LATEST)
    match = _OFFSET.fullmatch(offset.strip())
    if match is None:
        return instant, True
    hours, minutes = divmod(int(match[2]), 100)
    if hours >= 24 or minutes >= 60:
        return instant, True
    sign = -1 if match[1] == "-" else 1
    return instant.astimezone(timezone(sign * timedelta(hours=hours, minutes=minutes))), False


def clean_text(text: str, *, multiline: bool) -> str:
    """`text` without control characters; a single-line field (a name) also loses tabs and
    line breaks."""
    text = _CONTROLS.sub("", text)
    return text if multiline else _LINE_BREAKS.sub(" ", text)


def _text(value: bytes) -> str:
    return value.decode("utf-8", errors="replace")


def _last_trailer_value(trailer: str) -> str:
    values = [value.strip() for value in trailer.split(",") if value.strip()]
    return values[-1] if values else ""
