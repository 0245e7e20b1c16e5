"""The candidate index of one clustering run: which stories an entry is compared with.

Comparing an entry with every story of the last NEWS_STORY_LINK_DAYS cost time in proportion
to the number of stories (50 ms an entry at a few thousand). The index keeps, for the stories
of the run's time span, one row each in memory:

- the story's IDF-weighted centroid, hashed into HASH_DIMENSIONS signed buckets (the hashing
  trick: inner products of hashed vectors estimate those of the sparse originals), all rows in
  one matrix;
- its entities in an inverted index, which gives the exact entity overlap of every story that
  shares one with the entry (a story sharing none scores 0 and can never be chosen);
- its first and newest member's times, for the window rules.

For an entry, only the stories that share an entity and lie in its time window are looked at:
one matrix product over their rows estimates the score of each (the text cosine from the
hashed rows, the entity overlap exact). Those whose estimate is ESTIMATE_MARGIN or more below
the lowest threshold are dropped, and of the rest the SHORTLIST_SIZE best get the exact score
(scoring.similarity). So the cost of an entry follows the number of stories near it, not the
number of stories, and the choice is the exhaustive one unless a hashing error larger than the
margin (about four standard deviations at 256 dimensions) hides the winner.
tests/news/stories/test_candidates.py compares both on a set built to crowd the
shortlist; benchmarks/news_ingest_bench.py measures the cost per entry at 40 and 40,000 stories.
"""

import zlib
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any

import numpy as np

HASH_DIMENSIONS = 256
SHORTLIST_SIZE = 24
# A hashed cosine is off by about 0.06 (one standard deviation) at 256 dimensions, the score by
# 0.6 of that: a margin of 0.15 is four of those.
ESTIMATE_MARGIN = 0.15
_INITIAL_ROWS = 256


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

    def shortlist(
        self,
        *,
        hashed: np.ndarray,
        entities: set[str],
        moment: datetime,
        text_weight: float,
        entity_weight: float,
        floor: float,
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
        if limit is None or not len(rows):
            return [self._items[row] for row in rows]
        # One product over the rows near the entry: the text part of each estimate.
        text = self._vectors[rows] @ hashed
        # The weighted Jaccard of scoring.entity_overlap, for these rows.
        shared = np.zeros(len(rows))
        for entity in entities:
            if entity in self._postings:
                # `rows` is sorted: where each of the entity's rows would sit in it, and
                # whether it is there (np.isin sorts both sides on every call).
                posting = self._posting(entity)
                where = np.minimum(np.searchsorted(rows, posting), len(rows) - 1)
                shared[where[rows[where] == posting]] += self._entity_weight(entity)
        mine = sum(self._entity_weight(e) for e in entities)
        overlap = shared / (mine + self._entity_total[rows] - shared)
        estimate = text_weight * text + entity_weight * overlap
        keep = estimate >= floor - ESTIMATE_MARGIN
        rows, estimate = rows[keep], estimate[keep]
        if len(rows) > limit:
            best = np.argpartition(-estimate, limit - 1)[:limit]
            rows = np.sort(rows[best])
        return [self._items[row] for row in rows]

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
