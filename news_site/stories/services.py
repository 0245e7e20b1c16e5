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
import functools
import logging
import uuid
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import connection, transaction
from django.db.models import Count, Max, Min, Model, Q, QuerySet
from django.utils import timezone
from django.utils.text import slugify
from redis.exceptions import RedisError

from news_site.news.cleaning import clean_text
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
# Entries assigned, and their choices written, per transaction.
_ASSIGN_BATCH = 512
# Stories recounted or written per round of bulk statements.
_WRITE_CHUNK = 500
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
    # Entries whose assignment raised: skipped, their reason kept in Entry.story_error.
    failed: int = 0
    skipped_locked: bool = False

    def line(self) -> str:
        if self.skipped_locked:
            return "stories: another clustering run holds the lock; nothing done"
        return (
            f"stories: {self.entries_assigned} entries assigned, {self.stories_created} new "
            f"({self.stories_linked} continuing an older story), {self.stories_joined} joined, "
            f"{self.stories_reopened} reopened, {self.failed} failed; "
            f"{self.stories_written} texts written "
            f"({self.stories_written_by_model} by the model)"
        )


@dataclass(eq=False)
class _Candidate:
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
        # An entry dated near year 1 (stored before dates were cleaned) must not overflow.
        earliest = since.replace(year=1, month=1, day=1) + _link_span()
        stories = list(selectors.stories_since(moment=max(since, earliest) - _link_span()))
        return cls(
            extractor=EntityExtractor.from_database(),
            idf=idf,
            stories=stories,
            shortlist_size=shortlist_size,
        )

    def story_put(self, candidate: _Candidate) -> None:
        story = candidate.story
        candidate.entities = set(story.entities)
        self.index.put(
            id(candidate),
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
            self._terms[entry.pk] = terms
        return terms

    def batch_prepare(self, entries: list[Entry]) -> None:
        """Forget the previous batch's terms; each entry's are worked out once, when it is
        assigned (inside its own isolation, so text that cannot be read fails that entry)."""
        self._terms = {}

    def nearby(self, entry: Entry, terms: _EntryTerms) -> list[_Candidate]:
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


@functools.lru_cache(maxsize=65536)
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
                touched |= stories_assign(entries=batch, context=context, report=report)
        stories_refresh(story_ids=touched, now=now)
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


def story_assign(
    *, entry: Entry, context: ClusteringContext, report: ClusterReport | None = None
) -> Story | None:
    """Put one entry into the best matching story, or a new one. None when the entry was
    assigned meanwhile (by an editor or another process)."""
    touched = stories_assign(entries=[entry], context=context, report=report)
    return Story.objects.get(pk=touched.pop()) if touched else None


@transaction.atomic
def stories_assign(
    *, entries: list[Entry], context: ClusteringContext, report: ClusterReport | None = None
) -> set[int]:
    """Put each entry, in order, into the best matching story or a new one; returns the ids of
    the stories that changed. Entries assigned meanwhile (by an editor) are left alone. The
    choices are made in memory, each seeing the ones before it; the writes are a few bulk
    statements per batch, whatever its size."""
    report = report or ClusterReport()
    free = set(
        Entry.objects.select_for_update()
        .filter(pk__in=[entry.pk for entry in entries], story__isnull=True)
        .values_list("pk", flat=True)
    )
    created: list[_Candidate] = []
    changed: dict[int, _Candidate] = {}
    assigned: list[tuple[Entry, _Candidate]] = []
    failed: list[Entry] = []
    for entry in entries:
        if entry.pk not in free:
            continue
        try:
            candidate = _story_choose(entry=entry, context=context, report=report)
        except Exception as exc:  # one entry never stops the others
            # Choosing writes nothing: the entry is left out of this batch's writes, and kept
            # out of later runs until an editor clears its error.
            logger.warning("entry %s not clustered: %s", entry.pk, _reason(exc), exc_info=True)
            entry.story_error = _reason(exc)
            failed.append(entry)
            continue
        if candidate.story.pk is None:
            if candidate not in created:
                created.append(candidate)
        else:
            changed[candidate.story.pk] = candidate
        assigned.append((entry, candidate))
    _stories_save(created=created, changed=list(changed.values()))
    for entry, candidate in assigned:
        entry.story_id = candidate.story.pk
    rows_update(Entry, [entry for entry, _ in assigned], ["story"])
    rows_update(Entry, failed, ["story_error"])
    report.entries_assigned += len(assigned)
    report.failed += len(failed)
    return {candidate.story.pk for _, candidate in assigned}


def _reason(exc: Exception) -> str:
    # Messages may quote the entry's text: cleaned so any database can store them.
    return clean_text(f"{type(exc).__name__}: {exc}")[:1000]


def _story_choose(*, entry: Entry, context: ClusteringContext, report: ClusterReport) -> _Candidate:
    """The story `entry` joins (a new, unsaved one when none fits), updated in memory and in
    the candidate index."""
    moment = entry.listed_at
    terms = context.entry_terms(entry)
    vector, entities = terms.vector, terms.entities
    window = timedelta(hours=settings.NEWS_STORY_WINDOW_HOURS)
    quiet = timedelta(hours=settings.NEWS_STORY_QUIET_HOURS)
    link_span = _link_span()

    best_join: tuple[float, _Candidate] | None = None
    best_link: tuple[float, _Candidate] | None = None
    for candidate in context.nearby(entry, terms):
        story = candidate.story
        gap = moment - story.last_entry_published_at
        if story.first_entry_published_at - moment > window or gap > link_span:
            continue
        score = similarity(
            vector=terms.weighted,
            entities=entities,
            story_vector=candidate.vector,
            story_entities=candidate.entities,
        )
        if gap <= window:
            threshold = REOPEN_THRESHOLD if gap > quiet else JOIN_THRESHOLD
            if score >= threshold and (best_join is None or score > best_join[0]):
                best_join = (score, candidate)
        if gap > quiet and score >= LINK_THRESHOLD and (best_link is None or score > best_link[0]):
            best_link = (score, candidate)

    # Counted once the choice is complete, so an entry that fails midway counts only as failed.
    counts: dict[str, int] = {}
    if best_join is not None:
        candidate = best_join[1]
        story = candidate.story
        reopened = moment - story.last_entry_published_at > quiet
        counts["stories_reopened" if reopened else "stories_joined"] = 1
    else:
        predecessor = best_link[1].story if best_link is not None else None
        story = Story(
            title=entry.title[:300],
            first_entry_published_at=moment,
            last_entry_published_at=moment,
            updated_at=moment,
        )
        candidate = _Candidate(story, predecessor=predecessor)
        counts = {"stories_created": 1, "stories_linked": int(predecessor is not None)}

    story.centroid = centroid_add(story.centroid, vector)
    story.entities = sorted(set(story.entities) | entities)
    story.first_entry_published_at = min(story.first_entry_published_at, moment)
    story.last_entry_published_at = max(story.last_entry_published_at, moment)
    candidate.vector = context.idf.apply(story.centroid)
    context.story_put(candidate)
    for name, count in counts.items():
        setattr(report, name, getattr(report, name) + count)
    return candidate


def _stories_save(*, created: list[_Candidate], changed: list[_Candidate]) -> None:
    Story.objects.bulk_create([candidate.story for candidate in created], batch_size=500)
    linked = []
    for candidate in created:
        if candidate.predecessor is not None:
            candidate.story.predecessor = candidate.predecessor
            linked.append(candidate.story)
    rows_update(Story, linked, ["predecessor"])
    # Only what clustering owns: an editor's title or text written meanwhile stays.
    rows_update(
        Story,
        [candidate.story for candidate in changed],
        ["centroid", "entities", "first_entry_published_at", "last_entry_published_at"],
    )


def rows_update(model: type[Model], objects: list[Model], fields: list[str]) -> None:
    """Write `fields` of each object, a different value per row. On PostgreSQL one UPDATE ...
    FROM (VALUES ...) per _WRITE_CHUNK rows; elsewhere one UPDATE per row, sent together
    (executemany). Django's bulk_update builds a CASE expression per row and field, which cost
    about 0.4 ms each, and a statement per row about 0.3 ms on PostgreSQL: as much as choosing
    the stories."""
    if not objects:
        return
    meta = model._meta
    columns = [meta.get_field(name) for name in fields]
    quote = connection.ops.quote_name
    table, key = quote(meta.db_table), quote(meta.pk.column)
    rows = [
        [row.pk]
        + [column.get_db_prep_save(getattr(row, column.attname), connection) for column in columns]
        for row in objects
    ]
    with connection.cursor() as cursor:
        if connection.vendor != "postgresql":
            assignments = ", ".join(f"{quote(column.column)} = %s" for column in columns)
            # Names from the model's metadata, quoted; every value is a parameter.
            sql = f"UPDATE {table} SET {assignments} WHERE {key} = %s"  # noqa: S608
            cursor.executemany(sql, [[*values, pk] for pk, *values in rows])
            return
        names = ", ".join(["pk", *(f"c{n}" for n in range(len(columns)))])
        # The VALUES list's columns have no type of their own (a column of NULLs reads as text):
        # each is cast to its column's.
        assignments = ", ".join(
            f"{quote(column.column)} = v.c{n}::{column.cast_db_type(connection)}"
            for n, column in enumerate(columns)
        )
        placeholders = "(" + ", ".join(["%s"] * (len(columns) + 1)) + ")"
        for start in range(0, len(rows), _WRITE_CHUNK):
            chunk = rows[start : start + _WRITE_CHUNK]
            sql = (
                f"UPDATE {table} SET {assignments} "  # noqa: S608
                f"FROM (VALUES {', '.join([placeholders] * len(chunk))}) AS v({names}) "
                f"WHERE {table}.{key} = v.pk"
            )
            cursor.execute(sql, [value for row in chunk for value in row])


def story_refresh(*, story: Story, now: datetime) -> Story:
    """Recount one story from its members (see stories_refresh)."""
    stories_refresh(story_ids=[story.pk], now=now)
    story.refresh_from_db()
    return story


@transaction.atomic
def stories_refresh(*, story_ids: Iterable[int], now: datetime) -> None:
    """Recount stories from their members: counts, time span, image, status, and every
    member's `source_count` (distinct sources; a syndicated copy is already one entry). A few
    statements per 500 stories."""
    ids = sorted(story_ids)
    for start in range(0, len(ids), _WRITE_CHUNK):
        chunk = ids[start : start + _WRITE_CHUNK]
        stats = {
            row["story_id"]: row
            for row in Entry.objects.filter(story_id__in=chunk)
            .values("story_id")
            .annotate(
                entries=Count("id"),
                sources=Count("feed", distinct=True),
                first=Min("listed_at"),
                last=Max("listed_at"),
            )
            .order_by()
        }
        images: dict[int, str] = {}
        for story_id, image_url in (
            Entry.objects.filter(story_id__in=chunk)
            .exclude(image_url="")
            .order_by("story_id", "listed_at", "id")
            .values_list("story_id", "image_url")
        ):
            images.setdefault(story_id, image_url)
        stories = [story for story in Story.objects.filter(pk__in=chunk) if story.pk in stats]
        by_sources: dict[int, list[int]] = defaultdict(list)
        for story in stories:
            row = stats[story.pk]
            story.entries_count = row["entries"]
            story.source_count = row["sources"]
            story.first_entry_published_at = row["first"]
            story.last_entry_published_at = row["last"]
            # "Updated" means the story last had news: its newest member, not when we
            # recomputed it.
            story.updated_at = row["last"]
            story.image_url = images.get(story.pk, "")
            story.status = _status(last=row["last"], now=now)
            by_sources[story.source_count].append(story.pk)
        rows_update(
            Story,
            stories,
            [
                "entries_count",
                "source_count",
                "first_entry_published_at",
                "last_entry_published_at",
                "updated_at",
                "image_url",
                "status",
            ],
        )
        for count, members_of in by_sources.items():
            Entry.objects.filter(story_id__in=members_of).exclude(source_count=count).update(
                source_count=count
            )


def stories_write(
    *, stories: QuerySet[Story], model: ChatModel | None, report: ClusterReport | None = None
) -> None:
    """Write the text of every story whose members changed since its text was written, and
    upgrade offline texts of multi-source stories when a model is configured. A story of one
    article is that article: it never costs a model call. Members are read 500 stories at a
    time, offline texts written in bulk."""
    report = report or ClusterReport()
    ordered = list(stories.filter(entries_count__gt=0).order_by("-updated_at", "-id"))
    for start in range(0, len(ordered), _WRITE_CHUNK):
        chunk = ordered[start : start + _WRITE_CHUNK]
        members_of: dict[int, list[Entry]] = defaultdict(list)
        for entry in selectors.stories_members(story_ids=[story.pk for story in chunk]):
            members_of[entry.story_id].append(entry)
        written: list[Story] = []
        for story in chunk:
            members = members_of[story.pk]
            if not members:
                continue
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
            _story_text_set(story=story, text=text, fingerprint=fingerprint)
            written.append(story)
            report.stories_written += 1
            report.stories_written_by_model += text.by_model
        rows_update(Story, written, _TEXT_FIELDS)


_TEXT_FIELDS = ["title", "slug", "lead", "body", "written_by_model", "text_fingerprint"]


def story_text_save(*, story: Story, text: StoryText, fingerprint: str) -> None:
    _story_text_set(story=story, text=text, fingerprint=fingerprint)
    story.save(update_fields=_TEXT_FIELDS)


def _story_text_set(*, story: Story, text: StoryText, fingerprint: str) -> None:
    story.title = text.title
    story.slug = slugify(text.title)[:300]
    story.lead = text.lead
    story.body = text.body
    story.written_by_model = text.by_model
    story.text_fingerprint = fingerprint


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
