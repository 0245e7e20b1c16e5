"""Reading and validating the state files one reindex needs, on every core.

Parsing YAML and checking it against the schema is most of a full reindex's work, and each file
version is independent of the others, so large runs spread it over worker processes. Workers
are spawned, not forked: a forked child would share the parent's database connections. This
module imports no Django for the same reason.
"""

import hashlib
import os
from collections.abc import Generator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context
from typing import Any

import git

from compliance_site.records.documents import (
    MAX_FILE_BYTES,
    InvalidDocument,
    StateValidator,
    parse_state,
)

# Below this many files per worker, starting processes costs more than it saves.
_FILES_PER_WORKER = 400
_CHUNK = 64


@dataclass(frozen=True)
class Parsed:
    path: str
    blob_sha: str
    payload: dict[str, Any] | None = None
    error: str = ""
    schema_path: str = ""


class _Reader:
    def __init__(self, repo_path: str) -> None:
        self.repo = git.Repo(repo_path)
        self.checkers: dict[str, StateValidator] = {}

    def parse(self, job: tuple[str, str, str]) -> Parsed:
        path, blob_sha, major = job
        try:
            stream = self.repo.odb.stream(bytes.fromhex(blob_sha))
            if stream.size > MAX_FILE_BYTES:
                # Refused before reading: the cap is on what reaches memory and the parser.
                raise InvalidDocument(
                    f"{path}: the file is {stream.size} bytes; the limit is {MAX_FILE_BYTES}"
                )
            content = stream.read()
            if _object_id(content, blob_sha) != blob_sha:
                # git can hand back a damaged object's bytes without complaint.
                raise ValueError("its content does not match its object id (corrupt object)")
            if major not in self.checkers:
                self.checkers[major] = StateValidator(major)
            document = parse_state(path, content, checker=self.checkers[major])
        except InvalidDocument as exc:
            return Parsed(path, blob_sha, error=exc.message, schema_path=exc.schema_path)
        except (ValueError, git.GitError, OSError) as exc:
            return Parsed(path, blob_sha, error=f"{path}: unreadable blob: {exc}")
        return Parsed(path, blob_sha, payload=document.payload)

    def close(self) -> None:
        self.repo.close()


def _object_id(content: bytes, like: str) -> str:
    algorithm = hashlib.sha256 if len(like) == 64 else hashlib.sha1
    return algorithm(b"blob %d\x00" % len(content) + content).hexdigest()


_worker_reader: _Reader | None = None


def _start_worker(repo_path: str) -> None:
    global _worker_reader
    _worker_reader = _Reader(repo_path)


def _parse_in_worker(job: tuple[str, str, str]) -> Parsed:
    assert _worker_reader is not None
    return _worker_reader.parse(job)


def parse_blobs(repo_path: str, jobs: list[tuple[str, str, str]]) -> Generator[Parsed, None, None]:
    """Parse (path, blob, schema major) jobs; results come back in the order of `jobs`."""
    workers = min(os.cpu_count() or 1, len(jobs) // _FILES_PER_WORKER)
    if workers < 2:
        reader = _Reader(repo_path)
        try:
            yield from map(reader.parse, jobs)
        finally:
            reader.close()
        return
    with ProcessPoolExecutor(
        max_workers=workers,
        mp_context=get_context("spawn"),
        initializer=_start_worker,
        initargs=(repo_path,),
    ) as pool:
        yield from pool.map(_parse_in_worker, jobs, chunksize=_CHUNK)
