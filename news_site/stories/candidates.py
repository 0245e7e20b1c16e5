"""The candidate index of one clustering run: which stories an entry is compared with.

Comparing an entry with every story of the last NEWS_STORY_LINK_DAYS cost time in proportion
to the number of stories (50 ms an entry at a few thousand). The index keeps, for the stories
of the run's time span, one row each in memory:

- the story's IDF-weighted centroid, hashed into HASH_DIMENSIONS signed buckets (the hashing
  trick: inner products of hashed vectors estimate those of the sparse originals), so that one
  matrix product scores a batch of entries against every story at once;
- its entities in an inverted index, which gives the exact entity overlap of every story that
  shares one with the entry (a story sharing none scores 0 and can never be chosen);
- its first and newest member's times, for the window rules.

An entry's shortlist is the SHORTLIST_SIZE stories with the best estimated score among those
that share an entity and lie in the time window, plus every story changed since the batch's
product was taken. Only the shortlist gets the exact score (services.similarity), so the
choice is the exhaustive one unless a story outside the shortlist would have won, which takes
an estimate off by more than the gap to SHORTLIST_SIZE better-looking stories.
tests/news/stories/test_news_stories_candidates.py compares both on a set built to crowd the
shortlist; benchmarks/news_ingest_bench.py measures the cost per entry at 40 and 40,000 stories.
"""

import functools
import zlib
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any

import numpy as np
from threadpoolctl import ThreadpoolController

HASH_DIMENSIONS = 256
SHORTLIST_SIZE = 24
_INITIAL_ROWS = 256


@functools.cache
def _blas() -> ThreadpoolController:
    return ThreadpoolController()


class _TermHasher:
    """Bucket and sign of each term; the same for every process (crc32, not the salted hash)."""

    def __init__(self) -> None:
        self._cache: dict[str, tuple[int, float]] = {}

    def __call__(self, vector: Mapping[str, float]) -> np.ndarray:
        out = np.zeros(HASH_DIMENSIONS, dtype=np.float32)
        for term, value in vector.items():
            slot = self._cache.get(term)
            if slot is None:
                code = zlib.crc32(term.encode())
                slot = (code % HASH_DIMENSIONS, 1.0 if code & (1 << 31) else -1.0)
                self._cache[term] = slot
            out[slot[0]] += slot[1] * value
        return out


class CandidateIndex:
    """Rows of (hashed centroid, entities, first and last time) per story, found by the
    story's key; `shortlist` answers the items stored with them. Rows change as stories grow."""

    def __init__(
        self,
        *,
        entity_weight: Callable[[str], float],
        window: timedelta,
        link_span: timedelta,
        shortlist_size: int | None = SHORTLIST_SIZE,
    ) -> None:
        self._entity_weight = entity_weight
        self._window = window.total_seconds()
        self._link_span = link_span.total_seconds()
        self.shortlist_size = shortlist_size
        self._hash = _TermHasher()
        self._vectors = np.zeros((_INITIAL_ROWS, HASH_DIMENSIONS), dtype=np.float32)
        self._first = np.zeros(_INITIAL_ROWS)
        self._last = np.zeros(_INITIAL_ROWS)
        self._entity_total = np.zeros(_INITIAL_ROWS)
        self._items: list[Any] = []
        self._row_of: dict[Any, int] = {}
        self._row_entities: list[frozenset[str]] = []
        self._postings: dict[str, list[int]] = {}
        self._posting_arrays: dict[str, np.ndarray] = {}
        # The batch product: estimated cosines of the batch's entries with rows [0, _scored).
        self._batch: dict[Any, np.ndarray] = {}
        self._scored = 0
        self._changed: set[int] = set()

    def __len__(self) -> int:
        return len(self._items)

    def hashed(self, vector: Mapping[str, float]) -> np.ndarray:
        return self._hash(vector)

    def put(
        self,
        key: Any,
        item: Any,
        *,
        vector: Mapping[str, float],
        entities: Iterable[str],
        first: datetime,
        last: datetime,
    ) -> None:
        """Add a story or replace what the index knows of it."""
        row = self._row_of.get(key)
        if row is None:
            row = len(self._items)
            self._grow(row + 1)
            self._items.append(item)
            self._row_of[key] = row
            self._row_entities.append(frozenset())
        else:
            self._items[row] = item
        entities = frozenset(entities)
        for entity in entities - self._row_entities[row]:
            self._postings.setdefault(entity, []).append(row)
            self._posting_arrays.pop(entity, None)
        self._row_entities[row] = entities
        self._vectors[row] = self._hash(vector)
        self._first[row] = first.timestamp()
        self._last[row] = last.timestamp()
        self._entity_total[row] = sum(self._entity_weight(e) for e in entities)
        self._changed.add(row)

    def batch_score(self, hashed: Mapping[Any, np.ndarray]) -> None:
        """One matrix product: every entry of the coming batch against every row so far."""
        self._batch = {}
        self._scored = len(self._items)
        self._changed = set()
        if not hashed or not self._scored:
            return
        keys = list(hashed)
        # One BLAS thread: a product this small is quicker alone than split among threads on
        # cores the other workers use (measured 2.8 ms against 26 ms on a busy 2-core host).
        with _blas().limit(limits=1, user_api="blas"):
            products = np.stack([hashed[key] for key in keys]) @ self._vectors[: self._scored].T
        self._batch = dict(zip(keys, products, strict=True))

    def shortlist(
        self,
        *,
        key: Any,
        hashed: np.ndarray,
        entities: set[str],
        moment: datetime,
        text_weight: float,
        entity_weight: float,
    ) -> list[Any]:
        """The stories worth the exact comparison for one entry (see the module docstring)."""
        rows = self._rows_sharing(entities)
        if not len(rows):
            return []
        at = moment.timestamp()
        in_time = (self._first[rows] - at <= self._window) & (
            at - self._last[rows] <= self._link_span
        )
        rows = rows[in_time]
        limit = self.shortlist_size
        if limit is None or len(rows) <= limit:
            return [self._items[row] for row in rows]
        # Rows changed since the batch's product are compared exactly whatever their estimate.
        changed = np.fromiter(self._changed, dtype=np.int64, count=len(self._changed))
        fresh = np.isin(rows, changed) | (rows >= self._scored)
        settled = rows[~fresh]
        products = self._batch.get(key)
        # An entry outside a prepared batch (story_assign called alone) is scored here.
        text = self._vectors[settled] @ hashed if products is None else products[settled]
        # The weighted Jaccard of services.entity_overlap, for every row at once.
        shared = np.zeros(len(self._items))
        for entity in entities:
            if entity in self._postings:
                shared[self._posting(entity)] += self._entity_weight(entity)
        shared = shared[settled]
        mine = sum(self._entity_weight(e) for e in entities)
        overlap = shared / (mine + self._entity_total[settled] - shared)
        estimate = text_weight * text + entity_weight * overlap
        if len(settled) > limit:
            best = np.argpartition(-estimate, limit - 1)[:limit]
            settled = settled[best]
        chosen = np.concatenate([settled, rows[fresh]])
        return [self._items[row] for row in np.sort(chosen)]

    def _rows_sharing(self, entities: set[str]) -> np.ndarray:
        postings = [self._posting(entity) for entity in entities if entity in self._postings]
        if not postings:
            return np.empty(0, dtype=np.int64)
        return np.unique(np.concatenate(postings))

    def _posting(self, entity: str) -> np.ndarray:
        array = self._posting_arrays.get(entity)
        if array is None:
            array = np.array(self._postings.get(entity, ()), dtype=np.int64)
            self._posting_arrays[entity] = array
        return array

    def _grow(self, rows: int) -> None:
        if rows <= len(self._first):
            return
        capacity = max(rows, 2 * len(self._first))
        vectors = np.zeros((capacity, HASH_DIMENSIONS), dtype=np.float32)
        vectors[: len(self._vectors)] = self._vectors
        self._vectors = vectors
        for name in ("_first", "_last", "_entity_total"):
            old = getattr(self, name)
            new = np.zeros(capacity)
            new[: len(old)] = old
            setattr(self, name, new)
