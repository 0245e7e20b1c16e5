"""The candidate index picks the same stories as comparing every entry with every story in its
window: on a set built so that far more stories share the entries' entity than the shortlist
holds, over several days (joins, dormant stories, continuations)."""

import random
from datetime import timedelta

import pytest
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from news_site.news.models import Entry, Story
from news_site.stories import selectors
from news_site.stories.candidates import ESTIMATE_MARGIN, CandidateIndex
from news_site.stories.clustering import stories_assign
from news_site.stories.entities import entity_weight
from news_site.stories.scoring import (
    ENTITY_WEIGHT,
    TEXT_WEIGHT,
    ClusteringContext,
    entity_overlap,
)

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]

LINES = ["iPhone", "iPad", "MacBook Air", "Apple Watch Series"]
WORDS = [
    "battery",
    "screen",
    "camera",
    "price",
    "delay",
    "leak",
    "review",
    "update",
    "chip",
    "storage",
    "colour",
    "design",
    "charger",
    "modem",
    "display",
    "sensor",
    "launch",
    "factory",
    "supplier",
    "recall",
]


def _cluster(shortlist_size: int | None) -> tuple[dict[str, frozenset[str]], int]:
    """Cluster every due entry as stories_cluster does; the partition of entry guids (each
    with its story's predecessor's members) and the largest shortlist an entry got."""
    due = list(selectors.entries_due_for_story())
    context = ClusteringContext.build(since=due[0].listed_at, shortlist_size=shortlist_size)
    widest = 0
    for start in range(0, len(due), 16):
        batch = due[start : start + 16]
        context.batch_prepare(batch)
        for entry in batch:
            widest = max(widest, len(context.nearby(entry, context.entry_terms(entry))))
        stories_assign(entries=batch, context=context)
    members: dict[int, frozenset[str]] = {}
    for story in Story.objects.all():
        members[story.pk] = frozenset(story.entries.values_list("guid", flat=True))
    partition = {}
    for story in Story.objects.all():
        before = members.get(story.predecessor_id, frozenset())
        partition[",".join(sorted(members[story.pk]))] = before
    return partition, widest


def test_candidate_index_assigns_as_the_exhaustive_comparison(make_feed, make_entry):
    rng = random.Random(7)
    now = timezone.now()
    feeds = [make_feed(language="en") for _ in range(6)]
    # 40 events over six days, each about a product model of its own, all built on one chip:
    # each entry shares an entity with every other story, many times the shortlist below.
    for event in range(40):
        product = f"{rng.choice(LINES)} {event + 10} with the A20 chip"
        words = rng.sample(WORDS, 5)
        start = rng.uniform(2, 6 * 24)
        for n in range(rng.randint(1, 4)):
            chosen = rng.sample(words, 4)
            make_entry(
                rng.choice(feeds),
                title=f"{product} {' '.join(chosen[:3])}",
                summary_original=f"The {product} {' '.join(chosen)} {rng.choice(WORDS)}.",
                summary_translated="",
                language="en",
                published_at=now - timedelta(hours=start - n * rng.uniform(1, 30)),
                url=f"https://source.example/{event}/{n}",
            )

    exhaustive, everything = _cluster(shortlist_size=None)
    Entry.objects.update(story=None)
    Story.objects.all().delete()
    shortlisted, widest = _cluster(shortlist_size=3)

    assert everything > 3 * 2, "the set must crowd the shortlist"
    assert widest < everything
    assert shortlisted == exhaustive
    assert len(exhaustive) > 20


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    entry=st.sets(st.sampled_from(["iphone", "iphone 18 pro", "m5", "eu", "face id"]), min_size=1),
    stories=st.lists(
        st.sets(st.sampled_from(["iphone", "iphone 18 pro", "m5", "eu", "ipad", "a20"])),
        min_size=1,
        max_size=8,
    ),
)
def test_index_entity_overlap_is_the_services_overlap(entry, stories):
    """With no text at all, the index's estimate is exactly ENTITY_WEIGHT x the overlap, so a
    shortlist of one keeps the story that entity_overlap ranks first."""
    moment = timezone.now()
    index = CandidateIndex(
        entity_weight=entity_weight,
        window=timedelta(hours=72),
        link_span=timedelta(days=30),
        shortlist_size=1,
    )
    for number, entities in enumerate(stories):
        index.put(number, number, vector={}, entities=entities, first=moment, last=moment)
    chosen = index.shortlist(
        hashed=index.hashed({}),
        entities=entry,
        moment=moment,
        text_weight=TEXT_WEIGHT,
        entity_weight=ENTITY_WEIGHT,
        # No estimate is dropped for being low: this checks the ranking.
        floor=ESTIMATE_MARGIN,
    )
    overlaps = [entity_overlap(entry, set(entities)) for entities in stories]
    if max(overlaps) == 0:
        assert chosen == []
    else:
        assert len(chosen) == 1
        assert overlaps[chosen[0]] == pytest.approx(max(overlaps))
