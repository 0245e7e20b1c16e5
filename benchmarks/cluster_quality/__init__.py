"""Clustering quality on labelled sets: pairwise precision, recall and F1 over same-story
pairs, and B-cubed F1. Entries outside any story count as singletons.

Two sets: the demo (labels.json), which the thresholds were tuned on, and a held-out set
(holdout.yaml: 106 articles from 12 sources about 23 events over a week) that they never saw.
"""

import json
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Set
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from email.utils import format_datetime
from itertools import combinations
from pathlib import Path
from xml.sax.saxutils import escape

import httpx
import yaml

from news_site.news.feeds import feed_add
from news_site.news.models import Entry, Feed, Story
from shared.fetch import FetchError, FetchResult

LABELS_PATH = Path(__file__).resolve().parent / "labels.json"
HOLDOUT_PATH = Path(__file__).resolve().parent / "holdout.yaml"


@dataclass(frozen=True)
class Quality:
    entries: int
    events: int
    stories: int
    pairwise_precision: float
    pairwise_recall: float
    pairwise_f1: float
    bcubed_precision: float
    bcubed_recall: float
    bcubed_f1: float
    # Predecessor links, as (event, earlier event) pairs of the stories' majority events.
    links_expected: frozenset[tuple[str, str]] = frozenset()
    links_found: frozenset[tuple[str, str]] = frozenset()

    def lines(self) -> list[str]:
        return [
            f"entries {self.entries}, true events {self.events}, predicted stories {self.stories}",
            f"pairwise precision {self.pairwise_precision:.3f} recall {self.pairwise_recall:.3f} "
            f"F1 {self.pairwise_f1:.3f}",
            f"B-cubed precision {self.bcubed_precision:.3f} recall {self.bcubed_recall:.3f} "
            f"F1 {self.bcubed_f1:.3f}",
            f"predecessor links: {len(self.links_found & self.links_expected)} of "
            f"{len(self.links_expected)} expected found, "
            f"{len(self.links_found - self.links_expected)} unexpected",
        ]


def labels_load() -> dict[str, str]:
    """Feed GUID -> true event id."""
    return json.loads(LABELS_PATH.read_text(encoding="utf-8"))["events"]


def continuations_load() -> set[tuple[str, str]]:
    """(event, the earlier event it continues)."""
    return set(json.loads(LABELS_PATH.read_text(encoding="utf-8"))["continuations"].items())


def holdout_load(*, now: datetime, ingest: Callable[..., object]) -> dict[str, str]:
    """Register the held-out set's sources and ingest its articles through the real pipeline
    (fetch, parse, offline summaries, embeddings, clustering), each dated `hours` before `now`.
    `ingest` is the ingest app's run (it sits above this app), called with a `fetcher` that
    serves the set. Returns feed GUID -> true event id."""
    data = yaml.safe_load(HOLDOUT_PATH.read_text(encoding="utf-8"))
    documents: dict[str, list[str]] = defaultdict(list)
    labels: dict[str, str] = {}
    for number, item in enumerate(data["items"]):
        guid = f"holdout-{number:03d}"
        labels[guid] = item["event"]
        published = format_datetime(now - timedelta(hours=item["hours"]))
        documents[item["source"]].append(
            f"<item><title>{escape(item['title'])}</title>"
            f"<link>https://{item['source']}.example/{guid}</link>"
            f'<guid isPermaLink="false">{guid}</guid><pubDate>{published}</pubDate>'
            f"<description>{escape(item['text'])}</description></item>"
        )
    bodies = {}
    for source, meta in data["sources"].items():
        url = f"https://{source}.example/feed"
        bodies[url] = (
            '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel>'
            f"<title>{escape(meta['title'])}</title><link>https://{source}.example/</link>"
            f"{''.join(documents[source])}</channel></rss>"
        ).encode()
        feed_add(url=url, title=meta["title"], language=meta["language"])
    Feed.objects.filter(url__in=bodies).update(next_check_at=now)

    def fetcher(url: str, *, headers: dict[str, str], max_bytes: int | None = None) -> FetchResult:
        if url not in bodies:
            raise FetchError("connection_error", "the held-out set is offline")
        return FetchResult(
            url=url,
            status_code=200,
            headers=httpx.Headers({"Content-Type": "application/rss+xml; charset=utf-8"}),
            body=bodies[url],
            permanent_redirect_url=None,
        )

    ingest(fetcher=fetcher)
    return labels


def quality_measure(
    *, labels: Mapping[str, str], continuations: Set[tuple[str, str]] = frozenset()
) -> Quality:
    """Compare the stories in the database with the labels (every labelled entry present)."""
    truth: dict[int, str] = {}
    predicted: dict[int, str] = {}
    for entry_id, guid, story_id in Entry.objects.values_list("pk", "guid", "story_id"):
        if guid in labels:
            truth[entry_id] = labels[guid]
            predicted[entry_id] = f"story-{story_id}" if story_id else f"alone-{entry_id}"
    quality = quality_score(truth=truth, predicted=predicted)
    return replace(
        quality,
        links_expected=frozenset(continuations),
        links_found=frozenset(_links_found(truth=truth)),
    )


def _links_found(*, truth: Mapping[int, str]) -> set[tuple[str, str]]:
    events: dict[int, Counter[str]] = defaultdict(Counter)
    for entry_id, story_id in Entry.objects.filter(story__isnull=False).values_list(
        "pk", "story_id"
    ):
        if entry_id in truth:
            events[story_id][truth[entry_id]] += 1
    majority = {story_id: counts.most_common(1)[0][0] for story_id, counts in events.items()}
    return {
        (majority[story_id], majority[predecessor_id])
        for story_id, predecessor_id in Story.objects.filter(predecessor__isnull=False).values_list(
            "pk", "predecessor_id"
        )
        if story_id in majority and predecessor_id in majority
    }


def quality_score(*, truth: Mapping[int, str], predicted: Mapping[int, str]) -> Quality:
    items = sorted(truth)
    same_true = {(a, b) for a, b in combinations(items, 2) if truth[a] == truth[b]}
    same_pred = {(a, b) for a, b in combinations(items, 2) if predicted[a] == predicted[b]}
    both = len(same_true & same_pred)
    precision = both / len(same_pred) if same_pred else 1.0
    recall = both / len(same_true) if same_true else 1.0

    by_true: dict[str, set[int]] = defaultdict(set)
    by_pred: dict[str, set[int]] = defaultdict(set)
    for item in items:
        by_true[truth[item]].add(item)
        by_pred[predicted[item]].add(item)
    b_precision = b_recall = 0.0
    for item in items:
        overlap = len(by_true[truth[item]] & by_pred[predicted[item]])
        b_precision += overlap / len(by_pred[predicted[item]])
        b_recall += overlap / len(by_true[truth[item]])
    b_precision /= len(items) or 1
    b_recall /= len(items) or 1
    return Quality(
        entries=len(items),
        events=len(by_true),
        stories=len(by_pred),
        pairwise_precision=precision,
        pairwise_recall=recall,
        pairwise_f1=_f1(precision, recall),
        bcubed_precision=b_precision,
        bcubed_recall=b_recall,
        bcubed_f1=_f1(b_precision, b_recall),
    )


def _f1(precision: float, recall: float) -> float:
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0
