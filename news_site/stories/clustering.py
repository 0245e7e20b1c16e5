"""Story watch's run: entries about the same event, from any number of sources, become one
story. How an entry compares with a story is news_site.stories.scoring; the run assigns each due
entry, recounts the touched stories (recount), writes their texts (writing) and lets quiet
stories go dormant.

Time rules (hours from the settings; docs/editors.md, "Story watch (clustering)", documents
them):
- an entry may join a story whose newest member is at most NEWS_STORY_WINDOW_HOURS older;
- a story whose newest member is more than NEWS_STORY_QUIET_HOURS old is dormant, and an entry
  reopens it only at the higher REOPEN_THRESHOLD;
- a new story that continues a dormant story (up to NEWS_STORY_LINK_DAYS old) gets it as its
  predecessor.

Runs are idempotent: only entries without a story are clustered. One run at a time, across
hosts: the run holds a lock in the shared cache (shared.cache.lock_held).
"""

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import cast

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from news_site.news.cleaning import clean_text
from news_site.news.models import Entry, Story, StoryStatus
from news_site.news.summarise import ChatModel
from news_site.stories import selectors
from news_site.stories.recount import stories_refresh, stories_status_update
from news_site.stories.rows import rows_update
from news_site.stories.scoring import (
    JOIN_THRESHOLD,
    LINK_THRESHOLD,
    REOPEN_THRESHOLD,
    Candidate,
    ClusteringContext,
    link_span,
    similarity,
)
from news_site.stories.vectors import centroid_add
from news_site.stories.writing import stories_write
from shared.cache import lock_held

logger = logging.getLogger(__name__)

# Entries assigned, and their choices written, per transaction.
_ASSIGN_BATCH = 512
LOCK_NAME = "stories:cluster-lock"
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


def stories_cluster(
    *, model: ChatModel | None = None, now: datetime | None = None
) -> ClusterReport:
    """Assign every due entry to a story, refresh the touched stories, write their texts and
    update every story's status. Skips (reporting so) while another run holds the lock, or
    while the shared cache that keeps it is unreachable: unlocked, two runs could open the
    same story twice, so the entries wait for a later run."""
    report = ClusterReport()
    now = now or timezone.now()
    with lock_held(LOCK_NAME, seconds=_LOCK_SECONDS) as held:
        if not held:
            report.skipped_locked = True
            return report
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
        written = stories_write(stories=recent, model=model)
        report.stories_written += written.stories
        report.stories_written_by_model += written.by_model
        stories_status_update(now=now)
    return report


@transaction.atomic
def stories_assign(
    *, entries: list[Entry], context: ClusteringContext, report: ClusterReport | None = None
) -> set[int]:
    """Put each entry, in order, into the best matching story or a new one; returns the ids of
    the stories that changed. Entries assigned meanwhile, and any an editor placed (in a
    story or out of all: `story_pinned`, news_site.stories.curation), are left alone. The
    choices are made in memory, each seeing the ones before it; the writes are a few bulk
    statements per batch, whatever its size."""
    report = report or ClusterReport()
    free = set(
        Entry.objects.select_for_update()
        .filter(pk__in=[entry.pk for entry in entries], story__isnull=True, story_pinned=False)
        .values_list("pk", flat=True)
    )
    created: list[Candidate] = []
    changed: dict[int, Candidate] = {}
    assigned: list[tuple[Entry, Candidate]] = []
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


def _story_choose(*, entry: Entry, context: ClusteringContext, report: ClusterReport) -> Candidate:
    """The story `entry` joins (a new, unsaved one when none fits), updated in memory and in
    the candidate index."""
    moment = entry.listed_at
    terms = context.entry_terms(entry)
    vector, entities = terms.vector, terms.entities
    window = timedelta(hours=settings.NEWS_STORY_WINDOW_HOURS)
    quiet = timedelta(hours=settings.NEWS_STORY_QUIET_HOURS)
    span = link_span()

    best_join: tuple[float, Candidate] | None = None
    best_link: tuple[float, Candidate] | None = None
    for candidate in context.nearby(entry, terms):
        story = candidate.story
        # A story in the index has members, so both of its times are set.
        gap = moment - cast(datetime, story.last_entry_published_at)
        if cast(datetime, story.first_entry_published_at) - moment > window or gap > span:
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
        reopened = moment - cast(datetime, story.last_entry_published_at) > quiet
        counts["stories_reopened" if reopened else "stories_joined"] = 1
    else:
        predecessor = best_link[1].story if best_link is not None else None
        story = Story(
            title=entry.title[:300],
            first_entry_published_at=moment,
            last_entry_published_at=moment,
            updated_at=moment,
        )
        candidate = Candidate(story, predecessor=predecessor)
        counts = {"stories_created": 1, "stories_linked": int(predecessor is not None)}

    story.centroid = centroid_add(story.centroid, vector)
    story.entities = sorted(set(story.entities) | entities)
    story.first_entry_published_at = min(cast(datetime, story.first_entry_published_at), moment)
    story.last_entry_published_at = max(cast(datetime, story.last_entry_published_at), moment)
    candidate.vector = context.idf.apply(story.centroid)
    context.story_put(candidate)
    for name, count in counts.items():
        setattr(report, name, getattr(report, name) + count)
    return candidate


def _stories_save(*, created: list[Candidate], changed: list[Candidate]) -> None:
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
