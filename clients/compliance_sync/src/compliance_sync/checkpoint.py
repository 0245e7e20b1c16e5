"""Where a sync stands, kept in one JSON file that is replaced atomically (a temporary file in
the same folder, flushed to disk, then `os.replace`): a crash at any moment leaves either the
old checkpoint or the new one, never a torn file."""

import json
import os
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

FORMAT = 1


@dataclass
class Checkpoint:
    # meta.sync_token of the last completed pass: the next pass asks for what came after it.
    sync_token: str | None = None
    # A pass in progress: the token its first page gave (the next sync_token once the pass
    # completes), the cursor of its next page, and the events collected so far, newest first as
    # the feed pages them. They are emitted oldest first when the pass completes.
    pass_token: str | None = None
    cursor: str | None = None
    pending: list[dict[str, Any]] = field(default_factory=list)

    @property
    def in_pass(self) -> bool:
        return self.pass_token is not None


def checkpoint_load(path: Path) -> Checkpoint:
    """The checkpoint at `path`; a fresh one (full sync) when the file does not exist."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return Checkpoint()
    if data.get("format") != FORMAT:
        raise ValueError(f"{path} is not a checkpoint of this client (format {FORMAT})")
    return Checkpoint(
        sync_token=data.get("sync_token"),
        pass_token=data.get("pass_token"),
        cursor=data.get("cursor"),
        pending=list(data.get("pending") or []),
    )


def checkpoint_save(path: Path, checkpoint: Checkpoint) -> None:
    body = json.dumps({"format": FORMAT, **asdict(checkpoint)}, ensure_ascii=False)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(body)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
