"""An in-process index of the stored embeddings: brute-force cosine similarity.

At 100,000 entries of 384 dimensions a full scan is one matrix-vector product of a few
milliseconds, well under the search budget, with no extension the database would need. The
matrix is held in float16 (half the memory of float32, and the product is memory-bound, so it
is faster too) and multiplied by torch, which semantic search has loaded anyway; rankings do
not change at that precision. Each process keeps its own copy and catches up with new or
changed rows every NEWS_SEMANTIC_REFRESH_SECONDS, so a lost copy costs only a reload.
"""

import threading
import time

import numpy as np
import torch
from django.conf import settings

from news_site.search.embeddings import model_name
from news_site.search.models import EntryEmbedding

# The small blocks of later refreshes are merged once there are this many blocks.
_MAX_BLOCKS = 8
_LOAD_BATCH = 5000


class VectorIndex:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        """Forget everything; the next search reloads from the database."""
        self._ids: list[np.ndarray] = []
        self._blocks: list[np.ndarray] = []
        self._watermark = None
        self._checked_at = float("-inf")

    def nearest(self, vector: np.ndarray, k: int) -> list[tuple[int, float]]:
        """The k most similar entry ids with their cosine similarity, best first."""
        self._refresh()
        best: list[tuple[int, float]] = []
        query = torch.from_numpy(vector.astype(np.float16))
        # A refresh on another thread may append a block between the two reads.
        for ids, block in zip(list(self._ids), list(self._blocks), strict=False):
            if not len(ids):
                continue
            scores = (torch.from_numpy(block) @ query).float().numpy()
            top = np.argpartition(-scores, min(k, len(scores)) - 1)[:k]
            best.extend((int(ids[i]), float(scores[i])) for i in top if ids[i] >= 0)
        best.sort(key=lambda hit: -hit[1])
        return best[:k]

    def _refresh(self) -> None:
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
            if len(self._blocks) > _MAX_BLOCKS:
                self._merge_recent()
            self._checked_at = time.monotonic()

    def _load(self, rows, count: int) -> None:
        ids = np.empty(count, dtype=np.int64)
        block = None
        loaded = 0
        # Rows written between the count and the read go into a second block.
        late_ids: list[int] = []
        late: list[np.ndarray] = []
        for entry_id, vector, updated_at in rows.values_list(
            "entry_id", "vector", "updated_at"
        ).iterator(chunk_size=_LOAD_BATCH):
            values = np.frombuffer(bytes(vector), dtype=np.float32)
            if block is None:
                block = np.empty((count, len(values)), dtype=np.float16)
            if loaded < count:
                ids[loaded] = entry_id
                block[loaded] = values
                loaded += 1
            else:
                late_ids.append(entry_id)
                late.append(values)
            self._watermark = updated_at
        if loaded:
            self._add(ids[:loaded], block[:loaded])
        if late:
            self._add(np.array(late_ids, dtype=np.int64), np.vstack(late).astype(np.float16))

    def _add(self, ids: np.ndarray, block: np.ndarray) -> None:
        # A re-embedded entry's old row is marked dead (id -1) rather than removed.
        for old_ids in self._ids:
            old_ids[np.isin(old_ids, ids)] = -1
        self._ids.append(ids)
        self._blocks.append(block)

    def _merge_recent(self) -> None:
        """Merge the small blocks of later refreshes into one; the first (big) block stays."""
        ids = np.concatenate(self._ids[1:])
        live = ids >= 0
        self._ids = [self._ids[0], ids[live]]
        self._blocks = [self._blocks[0], np.vstack(self._blocks[1:])[live]]


INDEX = VectorIndex()
