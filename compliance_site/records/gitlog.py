"""One streaming pass over the data repository's first-parent history.

`git log --raw` gives, per commit, its metadata, its `Change-Source` trailer and the blob ids of
every file it touched (rename-aware, merges diffed against their first parent) in a single
process, so reindex never walks the history once per file.
"""

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

import git

# Fields are separated by US (0x1f), commits by RS (0x1e); the message comes last because it is
# the only free text.
_FORMAT = "%x1e%H%x1f%an%x1f%cI%x1f%(trailers:key=Change-Source,valueonly,separator=%x2C)%x1f%B%x1f"
_NULL_SHA = "0" * 40
_CHUNK = 1 << 16


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
    committed_at: datetime
    change_source: str
    message: str
    changes: tuple[FileChange, ...]


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


def iter_commits(repo: git.Repo, *, since: str | None, head: str, path: str) -> Iterator[Commit]:
    """Commits after `since` (exclusive) up to `head`, oldest first, that touch `path`."""
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
        f"--format={_FORMAT}",
        revision,
        "--",
        path,
        as_process=True,
    )
    stream = process.proc.stdout
    pending = b""
    try:
        while chunk := stream.read(_CHUNK):
            pending += chunk
            *complete, pending = pending.split(b"\x1e")
            for record in complete:
                if record:
                    yield _parse_record(record)
        if pending:
            yield _parse_record(pending)
    finally:
        process.wait()


def _parse_record(record: bytes) -> Commit:
    text = record.decode("utf-8", errors="replace")
    header, _, raw = text.rpartition("\x1f\x00")
    sha, author, committed_at, trailer, message = header.split("\x1f", 4)
    return Commit(
        sha=sha,
        author=author,
        committed_at=datetime.fromisoformat(committed_at),
        change_source=_last_trailer_value(trailer),
        message=message.rstrip("\x1f").strip(),
        changes=tuple(_parse_raw(raw)),
    )


def _last_trailer_value(trailer: str) -> str:
    values = [value.strip() for value in trailer.split(",") if value.strip()]
    return values[-1] if values else ""


def _parse_raw(raw: str) -> Iterator[FileChange]:
    tokens = [token for token in raw.strip("\n").split("\x00")]
    index = 0
    while index < len(tokens):
        meta = tokens[index].strip("\n")
        index += 1
        if not meta.startswith(":"):
            continue
        _old_mode, _new_mode, _old_sha, new_sha, status = meta[1:].split(" ")
        letter = status[0]
        if letter in "RC":
            old_path, path = tokens[index], tokens[index + 1]
            index += 2
        else:
            old_path, path = None, tokens[index]
            index += 1
        blob = None if letter == "D" or new_sha == _NULL_SHA else new_sha
        yield FileChange(status=letter, path=path, old_path=old_path, blob_sha=blob)
