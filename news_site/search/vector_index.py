"""An in-process index of the stored embeddings: brute-force cosine similarity.

At 100,000 entries of 384 dimensions a full scan is one matrix-vector product of a few
milliseconds, well under the search budget, with no extension the database would need. Each
vector is held as int8 with its own scale (a quarter of the memory of float32: 38 MB at
100,000 entries, which is what keeps a web worker with the model under 600 MB); a score is off
by at most about 0.002 that way, far below the gaps that order real hits. The product runs in
numpy a chunk at a time, so that no float copy of the whole matrix is ever made. Each process
keeps its own copy and catches up with new or changed rows every NEWS_SEMANTIC_REFRESH_SECONDS,
so a lost copy costs only a reload.
"""

import contextlib
import ctypes
import threading
import time
from typing import NamedTuple

import numpy as np
from django.conf import settings

from news_site.search.embeddings import model_name, on_model_thread
from news_site.search.models import EntryEmbedding

# The small blocks of later refreshes are merged once there are this many blocks.
_MAX_BLOCKS = 8
_LOAD_BATCH = 5000
# Rows multiplied at once: small enough that their float copy stays a few MB.
_SCAN_ROWS = 8192
_scan_buffer: np.ndarray | None = None


class _Part(NamedTuple):
    ids: np.ndarray  # int64; -1 marks a row superseded by a later one
    rows: np.ndarray  # int8
    scales: np.ndarray  # float32, one per row: a vector is rows[i] * scales[i]


class VectorIndex:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        """Forget everything; the next search reloads from the database."""
        # Replaced, never changed in place, so a search on another thread reads a consistent
        # list while a refresh adds or merges parts.
        self._parts: list[_Part] = []
        self._watermark = None
        self._checked_at = float("-inf")

    def __len__(self) -> int:
        """Live rows (a re-embedded entry's old row is not counted)."""
        return sum(int((part.ids >= 0).sum()) for part in self._parts)

    def nearest(self, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
        """The k most similar entry ids with their cosine similarity, best first."""
        self.refresh()
        best: list[tuple[int, float]] = []
        query = vector.astype(np.float32)
        for ids, rows, scales in self._parts:
            if not len(ids):
                continue
            scores = on_model_thread(_scores, rows, scales, query)
            top = np.argpartition(-scores, min(k, len(scores)) - 1)[:k]
            best.extend((int(ids[i]), float(scores[i])) for i in top if ids[i] >= 0)
        best.sort(key=lambda hit: -hit[1])
        return best[:k]

    def refresh(self) -> None:
        """Catch up with new or changed rows (at most every NEWS_SEMANTIC_REFRESH_SECONDS)."""
        every = settings.NEWS_SEMANTIC_REFRESH_SECONDS
        if time.monotonic() - self._checked_at < every:
            return
        with self._lock:
            if time.monotonic() - self._checked_at < every:
                return
            rows = EntryEmbedding.objects.filter(model_name=model_name())
            if self._watermark is not None:
                rows = rows.filter(updated_at__gt=self._watermark)
            # Filled in place: building the matrix from per-row arrays would hold the vectors
            # twice while loading, and a process rarely gives memory back.
            count = rows.count()
            if count:
                self._load(rows.order_by("updated_at"), count)
            if count >= _LOAD_BATCH:
                _memory_give_back()
            if len(self._parts) > _MAX_BLOCKS:
                self._merge_recent()
            self._checked_at = time.monotonic()

    def _load(self, rows, count: int) -> None:
        ids = np.empty(count, dtype=np.int64)
        block = None
        loaded = 0
        # Rows written between the count and the read go into a second block.
        late_ids: list[int] = []
        late: list[tuple[np.ndarray, np.float32]] = []
        for entry_id, vector, updated_at in rows.values_list(
            "entry_id", "vector", "updated_at"
        ).iterator(chunk_size=_LOAD_BATCH):
            values = np.frombuffer(bytes(vector), dtype=np.float32)
            if block is None:
                block = np.empty((count, len(values)), dtype=np.int8)
                scales = np.empty(count, dtype=np.float32)
            if loaded < count:
                ids[loaded] = entry_id
                block[loaded], scales[loaded] = _quantized(values)
                loaded += 1
            else:
                late_ids.append(entry_id)
                late.append(_quantized(values))
            self._watermark = updated_at
        if loaded:
            self._add(ids[:loaded], block[:loaded], scales[:loaded])  # type: ignore[index]
        if late:
            late_rows, late_scales = zip(*late, strict=True)
            self._add(
                np.array(late_ids, dtype=np.int64),
                np.vstack(late_rows),
                np.array(late_scales, dtype=np.float32),
            )

    def _add(self, ids: np.ndarray, rows: np.ndarray, scales: np.ndarray) -> None:
        # A re-embedded entry's old row is marked dead (id -1) rather than removed.
        for part in self._parts:
            part.ids[np.isin(part.ids, ids)] = -1
        self._parts = [*self._parts, _Part(ids, rows, scales)]

    def _merge_recent(self) -> None:
        """Merge the small blocks of later refreshes into one; the first (big) block stays."""
        first, *recent = self._parts
        ids = np.concatenate([part.ids for part in recent])
        live = ids >= 0
        merged = _Part(
            ids[live],
            np.vstack([part.rows for part in recent])[live],
            np.concatenate([part.scales for part in recent])[live],
        )
        self._parts = [first, merged]


def _memory_give_back() -> None:
    """A big load's row objects are freed, but glibc keeps their pages for reuse (about 25 MB
    after 100,000 rows); hand them back to the system. Elsewhere than glibc there is nothing
    to do."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


def _quantized(vector: np.ndarray) -> tuple[np.ndarray, np.float32]:
    """int8 values and the scale that gives the vector back (values * scale)."""
    scale = np.float32(np.abs(vector).max() / 127) or np.float32(1)
    return np.round(vector / scale).astype(np.int8), scale


def _scores(rows: np.ndarray, scales: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Similarities of every row to `query`; runs on the model thread, which alone uses the
    buffer (each search converting into a fresh 12 MB array left the allocator holding tens of
    MB it did not give back)."""
    global _scan_buffer
    if _scan_buffer is None or _scan_buffer.shape[1] != rows.shape[1]:
        _scan_buffer = np.empty((_SCAN_ROWS, rows.shape[1]), dtype=np.float32)
    scores = np.empty(len(rows), dtype=np.float32)
    for start in range(0, len(rows), _SCAN_ROWS):
        chunk = rows[start : start + _SCAN_ROWS]
        converted = _scan_buffer[: len(chunk)]
        np.copyto(converted, chunk)
        np.matmul(converted, query, out=scores[start : start + len(chunk)])
    return scores * scales


INDEX = VectorIndex()
