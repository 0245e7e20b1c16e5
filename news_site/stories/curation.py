"""Editors' corrections of story watch: take an article out of its story, move it to another,
split a story, merge stories.

Every article an editor places is pinned (`Entry.story_pinned`): clustering assigns only
unpinned articles without a story, so a run never moves it again, never puts an article taken
out back in, and never joins the halves of a split story (it assigns new articles, it never
merges stories). A merged story is deleted, so nothing can bring it back; stories that link to
it as their predecessor link to the story it was merged into.

After each correction the touched stories are rebuilt from their members as clustering would
have built them (term centroid and entities, so later articles are compared with what the story
now holds; counts, dates and status; the offline text), stories left without members are
deleted, and the public lists see the change at their next request (content generation).
"""

from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from news_site.news.generation import content_changed
from news_site.news.models import Entry, Story
from news_site.stories import selectors
from news_site.stories.entities import EntityExtractor
from news_site.stories.recount import stories_refresh
from news_site.stories.rows import rows_update
from news_site.stories.scoring import entry_vector
from news_site.stories.vectors import centroid_add
from news_site.stories.writing import stories_write


class CurationError(ValueError):
    """A correction that cannot be made (said to the editor as is)."""


@transaction.atomic
def entries_move(
    *, entry_ids: Iterable[int], story: Story | None, now: datetime | None = None
) -> int:
    """Put the entries in `story`, or in none (taken out); returns how many moved."""
    ids = list(entry_ids)
    entries = Entry.objects.select_for_update().filter(pk__in=ids)
    touched = set(entries.exclude(story=None).values_list("story_id", flat=True))
    moved = entries.update(story=story, story_pinned=True, story_error="")
    if story is not None:
        touched.add(story.pk)
    _stories_rebuild(story_ids=touched, now=now or timezone.now())
    return moved


@transaction.atomic
def story_split(*, story: Story, entry_ids: Iterable[int], now: datetime | None = None) -> Story:
    """Move some of the story's members into a new story of their own; returns it."""
    members = list(
        Entry.objects.filter(story=story, pk__in=list(entry_ids)).order_by("listed_at", "id")
    )
    if not members:
        raise CurationError(gettext("Choose at least one article of the story to split off."))
    first = members[0]
    new = Story.objects.create(
        title=first.title[:300],
        first_entry_published_at=first.listed_at,
        last_entry_published_at=members[-1].listed_at,
        updated_at=members[-1].listed_at,
    )
    entries_move(entry_ids=[entry.pk for entry in members], story=new, now=now)
    new.refresh_from_db()
    return new


@transaction.atomic
def stories_merge(*, target: Story, others: Iterable[Story], now: datetime | None = None) -> int:
    """Move every member of `others` into `target` and delete them; returns how many stories
    were merged into it."""
    ids = [story.pk for story in others if story.pk != target.pk]
    if not ids:
        raise CurationError(gettext("Choose at least two stories to merge."))
    Entry.objects.filter(story_id__in=ids).update(story=target, story_pinned=True, story_error="")
    Story.objects.filter(predecessor_id__in=ids).exclude(pk=target.pk).update(predecessor=target)
    if target.predecessor_id in ids:
        Story.objects.filter(pk=target.pk).update(predecessor=None)
    Story.objects.filter(pk__in=ids).delete()
    _stories_rebuild(story_ids={target.pk}, now=now or timezone.now())
    return len(ids)


def _stories_rebuild(*, story_ids: set[int], now: datetime) -> None:
    emptied = Story.objects.filter(pk__in=story_ids).exclude(
        pk__in=Entry.objects.filter(story_id__in=story_ids).values("story_id")
    )
    emptied.delete()
    members_of: dict[int, list[Entry]] = defaultdict(list)
    for entry in selectors.stories_members(story_ids=sorted(story_ids)):
        members_of[entry.story_id or 0].append(entry)
    extractor = EntityExtractor.from_database()
    stories = list(Story.objects.filter(pk__in=members_of))
    for story in stories:
        centroid: dict[str, float] = {}
        entities: set[str] = set()
        for entry in members_of[story.pk]:
            centroid = centroid_add(centroid, entry_vector(entry=entry))
            entities |= extractor.extract(selectors.entry_text(entry))
        story.centroid = centroid
        story.entities = sorted(entities)
    rows_update(Story, stories, ["centroid", "entities"])
    stories_refresh(story_ids=members_of.keys(), now=now)
    # The offline text now, so the public page never shows a title from articles it lost; a
    # configured model rewrites it at the next clustering run (the members' fingerprint).
    stories_write(stories=Story.objects.filter(pk__in=members_of), model=None)
    content_changed()
