"""Story watch: entries about the same event, from any number of sources, become one story.

An entry is compared with each nearby story's centroid (the sum of its members' term vectors),
never with single members: single-link chaining lets A~B~C merge A and C, which drift apart.
A candidate must share an entity (a product such as "iPhone 18 Pro", a service, an
institution) with the entry, and the score adds entity overlap to the TF-IDF cosine, so two
events about one product stay apart unless their wording also agrees.

Time rules (hours from the settings; the README documents them):
- an entry may join a story whose newest member is at most NEWS_STORY_WINDOW_HOURS older;
- a story whose newest member is more than NEWS_STORY_QUIET_HOURS old is dormant, and an entry
  reopens it only at the higher REOPEN_THRESHOLD;
- a new story that continues a dormant story (up to NEWS_STORY_LINK_DAYS old) gets it as its
  predecessor.

Runs are idempotent: only entries without a story are clustered, and story texts are rewritten
only when their members changed (or a model is now available for an offline text).
"""

import contextlib
import logging
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.db.models import Count, Max, Min, Q, QuerySet
from django.utils import timezone
from django.utils.text import slugify
from redis.exceptions import RedisError

from news_site.news.models import Entry, Story, StoryStatus
from news_site.news.summarise import BudgetExhausted, ChatModel, SummaryError
from news_site.news.text import sha256
from news_site.stories import selectors
from news_site.stories.candidates import SHORTLIST_SIZE, CandidateIndex
from news_site.stories.entities import EntityExtractor, is_specific
from news_site.stories.vectors import Idf, centroid_add, cosine, term_vector
from news_site.stories.writing import StoryText, story_text_from_model, story_text_offline

logger = logging.getLogger(__name__)

# Tuned on the labelled demo set (benchmarks/news_cluster_quality.py); see the README.
TEXT_WEIGHT = 0.6
ENTITY_WEIGHT = 0.4
JOIN_THRESHOLD = 0.42
REOPEN_THRESHOLD = 0.55
LINK_THRESHOLD = 0.45
# A product line alone ("iPhone") says less about the event than a model ("iPhone 18 Pro").
GENERIC_ENTITY_WEIGHT = 0.3
# Entries scored against every candidate story by one matrix product (stories.candidates).
_ASSIGN_BATCH = 64
_LOCK_KEY = "stories:cluster-lock"
_LOCK_SECONDS = 15 * 60


@dataclass
class ClusterReport:
    entries_assigned: int = 0
    stories_created: int = 0
    stories_joined: int = 0
    stories_reopened: int = 0
    stories_linked: int = 0
    stories_written: int = 0
    stories_written_by_model: int = 0
    skipped_locked: bool = False

    def line(self) -> str:
        if self.skipped_locked:
            return "stories: another clustering run holds the lock; nothing done"
        return (
            f"stories: {self.entries_assigned} entries assigned, {self.stories_created} new "
            f"({self.stories_linked} continuing an older story), {self.stories_joined} joined, "
            f"{self.stories_reopened} reopened; {self.stories_written} texts written "
            f"({self.stories_written_by_model} by the model)"
        )


@dataclass
class _Candidate:
    story: Story
    vector: dict[str, float] = field(default_factory=dict)


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
            link_span=_link_span(),
            shortlist_size=shortlist_size,
        )
        self._terms: dict[int, _EntryTerms] = {}
        for story in stories:
            self.story_put(_Candidate(story, idf.apply(story.centroid)))

    @classmethod
    def build(
        cls, *, since: datetime, shortlist_size: int | None = SHORTLIST_SIZE
    ) -> "ClusteringContext":
        idf = Idf.from_vectors(entry_vector(entry=e) for e in selectors.entries_for_idf())
        stories = list(selectors.stories_since(moment=since - _link_span()))
        return cls(
            extractor=EntityExtractor.from_database(),
            idf=idf,
            stories=stories,
            shortlist_size=shortlist_size,
        )

    def story_put(self, candidate: _Candidate) -> None:
        story = candidate.story
        self.index.put(
            story.pk,
            candidate,
            vector=candidate.vector,
            entities=story.entities,
            first=story.first_entry_published_at,
            last=story.last_entry_published_at,
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
        return terms

    def batch_prepare(self, entries: list[Entry]) -> None:
        """Work out the next entries' terms and score them against every story in one product."""
        self._terms = {entry.pk: self.entry_terms(entry) for entry in entries}
        self.index.batch_score({pk: terms.hashed for pk, terms in self._terms.items()})

    def nearby(self, entry: Entry, terms: _EntryTerms) -> list[_Candidate]:
        return self.index.shortlist(
            key=entry.pk,
            hashed=terms.hashed,
            entities=terms.entities,
            moment=entry.listed_at,
            text_weight=TEXT_WEIGHT,
            entity_weight=ENTITY_WEIGHT,
        )


def entry_vector(*, entry: Entry) -> dict[str, float]:
    return term_vector(title=entry.title, texts=(entry.summary_original, entry.summary_translated))


def entity_weight(entity: str) -> float:
    return 1.0 if is_specific(entity) else GENERIC_ENTITY_WEIGHT


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


# The run


def stories_cluster(
    *, model: ChatModel | None = None, now: datetime | None = None
) -> ClusterReport:
    """Assign every due entry to a story, refresh the touched stories, write their texts and
    update every story's status. Skips (reporting so) while another run holds the lock."""
    report = ClusterReport()
    now = now or timezone.now()
    token = uuid.uuid4().hex
    # The shared cache (Redis in production) makes this lock hold across hosts and workers.
    try:
        locked = cache.add(_LOCK_KEY, token, _LOCK_SECONDS)
    except RedisError as exc:
        # Unlocked, two runs could open the same story twice: the entries wait for a later run.
        logger.warning("stories not clustered, the shared cache is unreachable: %s", exc)
        locked = False
    if not locked:
        report.skipped_locked = True
        return report
    try:
        due = list(selectors.entries_due_for_story())
        touched: set[int] = set()
        if due:
            context = ClusteringContext.build(since=due[0].listed_at)
            for start in range(0, len(due), _ASSIGN_BATCH):
                batch = due[start : start + _ASSIGN_BATCH]
                context.batch_prepare(batch)
                for entry in batch:
                    story = story_assign(entry=entry, context=context, report=report)
                    if story is not None:
                        touched.add(story.pk)
        for story in Story.objects.filter(pk__in=touched):
            story_refresh(story=story, now=now)
        # Active stories too: their members' summaries may have improved since (model step).
        recent = Story.objects.filter(Q(pk__in=touched) | Q(status=StoryStatus.ACTIVE))
        stories_write(stories=recent, model=model, report=report)
        stories_status_update(now=now)
    finally:
        # A lock that cannot be released now expires after _LOCK_SECONDS.
        with contextlib.suppress(RedisError):
            if cache.get(_LOCK_KEY) == token:
                cache.delete(_LOCK_KEY)
    return report


@transaction.atomic
def story_assign(
    *, entry: Entry, context: ClusteringContext, report: ClusterReport | None = None
) -> Story | None:
    """Put one entry into the best matching story, or a new one. None when the entry was
    assigned meanwhile (by an editor or another process)."""
    report = report or ClusterReport()
    if not Entry.objects.select_for_update().filter(pk=entry.pk, story__isnull=True).exists():
        return None
    moment = entry.listed_at
    terms = context.entry_terms(entry)
    vector, entities = terms.vector, terms.entities
    window = timedelta(hours=settings.NEWS_STORY_WINDOW_HOURS)
    quiet = timedelta(hours=settings.NEWS_STORY_QUIET_HOURS)

    best_join: tuple[float, _Candidate] | None = None
    best_link: tuple[float, _Candidate] | None = None
    for candidate in context.nearby(entry, terms):
        story = candidate.story
        gap = moment - story.last_entry_published_at
        if story.first_entry_published_at - moment > window or gap > _link_span():
            continue
        score = similarity(
            vector=terms.weighted,
            entities=entities,
            story_vector=candidate.vector,
            story_entities=set(story.entities),
        )
        if gap <= window:
            threshold = REOPEN_THRESHOLD if gap > quiet else JOIN_THRESHOLD
            if score >= threshold and (best_join is None or score > best_join[0]):
                best_join = (score, candidate)
        if gap > quiet and score >= LINK_THRESHOLD and (best_link is None or score > best_link[0]):
            best_link = (score, candidate)

    if best_join is not None:
        candidate = best_join[1]
        story = Story.objects.select_for_update().get(pk=candidate.story.pk)
        if moment - story.last_entry_published_at > quiet:
            report.stories_reopened += 1
        else:
            report.stories_joined += 1
    else:
        predecessor = best_link[1].story if best_link is not None else None
        story = Story.objects.create(
            title=entry.title[:300],
            predecessor=predecessor,
            first_entry_published_at=moment,
            last_entry_published_at=moment,
            updated_at=moment,
        )
        candidate = _Candidate(story)
        report.stories_created += 1
        report.stories_linked += predecessor is not None

    story.centroid = centroid_add(story.centroid, vector)
    story.entities = sorted(set(story.entities) | entities)
    story.first_entry_published_at = min(story.first_entry_published_at, moment)
    story.last_entry_published_at = max(story.last_entry_published_at, moment)
    story.save(
        update_fields=[
            "centroid",
            "entities",
            "first_entry_published_at",
            "last_entry_published_at",
        ]
    )
    Entry.objects.filter(pk=entry.pk).update(story=story)
    candidate.story = story
    candidate.vector = context.idf.apply(story.centroid)
    context.story_put(candidate)
    report.entries_assigned += 1
    return story


@transaction.atomic
def story_refresh(*, story: Story, now: datetime) -> Story:
    """Recount a story from its members: counts, time span, image, status, and every member's
    `source_count` (distinct sources; a syndicated copy is already one entry)."""
    members = story.entries.all()
    stats = members.aggregate(
        entries=Count("id"),
        sources=Count("feed", distinct=True),
        first=Min("listed_at"),
        last=Max("listed_at"),
    )
    if not stats["entries"]:
        return story
    with_image = members.exclude(image_url="").order_by("listed_at", "id").first()
    story.entries_count = stats["entries"]
    story.source_count = stats["sources"]
    story.first_entry_published_at = stats["first"]
    story.last_entry_published_at = stats["last"]
    # "Updated" means the story last had news: its newest member, not when we recomputed it.
    story.updated_at = stats["last"]
    story.image_url = with_image.image_url if with_image else ""
    story.status = _status(last=stats["last"], now=now)
    story.save(
        update_fields=[
            "entries_count",
            "source_count",
            "first_entry_published_at",
            "last_entry_published_at",
            "updated_at",
            "image_url",
            "status",
        ]
    )
    members.exclude(source_count=story.source_count).update(source_count=story.source_count)
    return story


def stories_write(
    *, stories: QuerySet[Story], model: ChatModel | None, report: ClusterReport | None = None
) -> None:
    """Write the text of every story whose members changed since its text was written, and
    upgrade offline texts of multi-source stories when a model is configured. A story of one
    article is that article: it never costs a model call."""
    report = report or ClusterReport()
    for story in stories.filter(entries_count__gt=0).order_by("-updated_at", "-id"):
        members = list(selectors.story_members(story=story))
        fingerprint = _members_fingerprint(members)
        upgrade = model is not None and len(members) > 1 and not story.written_by_model
        if fingerprint == story.text_fingerprint and not upgrade:
            continue
        text = None
        if model is not None and len(members) > 1:
            try:
                text = story_text_from_model(members=members, model=model)
            except SummaryError as exc:
                logger.info("story %s: model text failed, offline text used: %s", story.pk, exc)
            except BudgetExhausted:
                logger.info("model budget spent; remaining stories get offline texts")
                model = None
        if text is None:
            if fingerprint == story.text_fingerprint:
                continue
            text = story_text_offline(members=members)
        story_text_save(story=story, text=text, fingerprint=fingerprint)
        report.stories_written += 1
        report.stories_written_by_model += text.by_model


def story_text_save(*, story: Story, text: StoryText, fingerprint: str) -> None:
    story.title = text.title
    story.slug = slugify(text.title)[:300]
    story.lead = text.lead
    story.body = text.body
    story.written_by_model = text.by_model
    story.text_fingerprint = fingerprint
    story.save(
        update_fields=["title", "slug", "lead", "body", "written_by_model", "text_fingerprint"]
    )


def stories_status_update(*, now: datetime) -> int:
    """Stories without a new member for the quiet period become dormant; returns how many."""
    quiet_since = now - timedelta(hours=settings.NEWS_STORY_QUIET_HOURS)
    return Story.objects.filter(
        status=StoryStatus.ACTIVE, last_entry_published_at__lt=quiet_since
    ).update(status=StoryStatus.DORMANT)


def _status(*, last: datetime, now: datetime) -> str:
    quiet = timedelta(hours=settings.NEWS_STORY_QUIET_HOURS)
    return StoryStatus.DORMANT if now - last > quiet else StoryStatus.ACTIVE


def _link_span() -> timedelta:
    return timedelta(days=settings.NEWS_STORY_LINK_DAYS)


def _members_fingerprint(members: list[Entry]) -> str:
    """Changes when a member joins or a member's title or summaries change."""
    return sha256(
        "\n".join(
            f"{e.pk}\t{e.title}\t{e.summary_original}\t{e.summary_translated}" for e in members
        )
    )
