"""How an entry compares with a story, and what one clustering run reads once to compare.

An entry is compared with each nearby story's centroid (the sum of its members' term vectors),
never with single members: single-link chaining lets A~B~C merge A and C, which drift apart.
A candidate must share an entity (a product such as "iPhone 18 Pro", a service, an
institution) with the entry, and the score adds entity overlap to the TF-IDF cosine, so two
events about one product stay apart unless their wording also agrees.
"""

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, cast

from django.conf import settings

from news_site.news.models import Entry, Story
from news_site.stories import selectors
from news_site.stories.candidates import SHORTLIST_SIZE, CandidateIndex
from news_site.stories.entities import EntityExtractor, entity_weight
from news_site.stories.vectors import Idf, cosine, term_vector

# Tuned on the labelled demo set (benchmarks/news_cluster_quality.py); docs/editors.md, "Story
# watch (clustering)", explains them.
TEXT_WEIGHT = 0.6
ENTITY_WEIGHT = 0.4
JOIN_THRESHOLD = 0.42
REOPEN_THRESHOLD = 0.55
LINK_THRESHOLD = 0.45


@dataclass(eq=False)
class Candidate:
    story: Story
    vector: dict[str, float] = field(default_factory=dict)
    # Of a story new in this run: the older story it continues, linked once both are saved
    # (the predecessor may be new in the same batch).
    predecessor: Story | None = None
    entities: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class _EntryTerms:
    """What the comparison reads of an entry, worked out once per run."""

    vector: dict[str, float]
    weighted: dict[str, float]
    hashed: Any
    entities: set[str]


class ClusteringContext:
    """What one run reads once: the entity vocabulary, document frequencies and the stories an
    entry may join or continue, in a candidate index (stories.candidates) updated as entries
    join. `shortlist_size=None` compares every entry with every story in its window (the
    exhaustive reference the tests hold the index to)."""

    def __init__(
        self,
        *,
        extractor: EntityExtractor,
        idf: Idf,
        stories: list[Story],
        shortlist_size: int | None = SHORTLIST_SIZE,
    ) -> None:
        self.extractor = extractor
        self.idf = idf
        self.index = CandidateIndex(
            entity_weight=entity_weight,
            window=timedelta(hours=settings.NEWS_STORY_WINDOW_HOURS),
            link_span=link_span(),
            shortlist_size=shortlist_size,
        )
        self._terms: dict[int, _EntryTerms] = {}
        for story in stories:
            self.story_put(Candidate(story, idf.apply(story.centroid)))

    @classmethod
    def build(
        cls, *, since: datetime, shortlist_size: int | None = SHORTLIST_SIZE
    ) -> "ClusteringContext":
        # A list, not a generator: the vectors module never calls back into this one.
        idf = Idf.from_vectors([entry_vector(entry=e) for e in selectors.entries_for_idf()])
        # An entry dated near year 1 (stored before dates were cleaned) must not overflow.
        earliest = since.replace(year=1, month=1, day=1) + link_span()
        stories = list(selectors.stories_since(moment=max(since, earliest) - link_span()))
        return cls(
            extractor=EntityExtractor.from_database(),
            idf=idf,
            stories=stories,
            shortlist_size=shortlist_size,
        )

    def story_put(self, candidate: Candidate) -> None:
        story = candidate.story
        candidate.entities = set(story.entities)
        self.index.put(
            id(candidate),
            candidate,
            vector=candidate.vector,
            entities=story.entities,
            # Both set: an indexed story has members, and a new one is dated by its first entry.
            first=cast(datetime, story.first_entry_published_at),
            last=cast(datetime, story.last_entry_published_at),
        )

    def entry_terms(self, entry: Entry) -> _EntryTerms:
        terms = self._terms.get(entry.pk)
        if terms is None:
            vector = entry_vector(entry=entry)
            weighted = self.idf.apply(vector)
            terms = _EntryTerms(
                vector=vector,
                weighted=weighted,
                hashed=self.index.hashed(weighted),
                entities=self.extractor.extract(selectors.entry_text(entry)),
            )
            self._terms[entry.pk] = terms
        return terms

    def batch_prepare(self, entries: list[Entry]) -> None:
        """Forget the previous batch's terms; each entry's are worked out once, when it is
        assigned (inside its own isolation, so text that cannot be read fails that entry)."""
        self._terms = {}

    def nearby(self, entry: Entry, terms: _EntryTerms) -> list[Candidate]:
        return self.index.shortlist(
            hashed=terms.hashed,
            entities=terms.entities,
            moment=entry.listed_at,
            text_weight=TEXT_WEIGHT,
            entity_weight=ENTITY_WEIGHT,
            floor=min(JOIN_THRESHOLD, LINK_THRESHOLD),
        )


def entry_vector(*, entry: Entry) -> dict[str, float]:
    return term_vector(title=entry.title, texts=(entry.summary_original, entry.summary_translated))


def entity_overlap(entry_entities: set[str], story_entities: set[str]) -> float:
    """Weighted Jaccard: shared weight over the weight of the union. (The overlap coefficient,
    shared over the smaller side, let a bare "Vision Pro" mention join any Vision Pro story;
    measured F1 0.81 against 1.0 for Jaccard on the labelled set.)"""
    shared = entry_entities & story_entities
    if not shared:
        return 0.0

    def weight(entities: set[str]) -> float:
        return sum(entity_weight(e) for e in entities)

    return weight(shared) / weight(entry_entities | story_entities)


def similarity(
    *,
    vector: dict[str, float],
    entities: set[str],
    story_vector: dict[str, float],
    story_entities: set[str],
) -> float:
    """0 without a shared entity; otherwise cosine and entity overlap, weighted."""
    overlap = entity_overlap(entities, story_entities)
    if not overlap:
        return 0.0
    return TEXT_WEIGHT * cosine(vector, story_vector) + ENTITY_WEIGHT * overlap


def link_span() -> timedelta:
    """How far back a new story may find the older story it continues."""
    return timedelta(days=settings.NEWS_STORY_LINK_DAYS)
