"""Writes of the search app: the embedding step of ingestion.

The one place entries get their vectors. Only entries that need one (no vector, a vector of
another model, or a summary rewritten since) are read, a batch at a time; the model is loaded
only once there is such an entry, so a run with nothing new never imports the model's
libraries, and then only once per process (the task worker keeps it for its next runs).
"""

from typing import TYPE_CHECKING

from django.conf import settings
from django.db.models import F, Q
from django.utils import timezone

from news_site.news.models import Entry
from news_site.search.embeddings import (
    embeddings_available,
    embeddings_enabled,
    model_name,
    texts_embed,
)
from news_site.search.models import EntryEmbedding

if TYPE_CHECKING:
    import numpy as np

# Entries read and written per database round trip; the model itself runs them one text at a
# time (embeddings.SentenceEncoder.encode), so memory stays flat whatever the backlog.
_BATCH = 256
# Vectors of the run's latest distinct texts kept for the entries after them (1.5 kB each).
_RECENT_TEXTS = 4096


def entry_embedding_text(entry: Entry) -> str:
    """What semantic search compares a query with: title and both summaries, so Swedish and
    English queries both find the entry."""
    parts = [entry.title, entry.summary_translated, entry.summary_original]
    # A Swedish source's lead is both summaries offline. Embedding it once would save a fifth
    # of the model's time, but cost recall (0.861 -> 0.858 on benchmarks/news_search_quality.py):
    # the repetition weighs the summary against the title.
    return "\n".join(part for part in parts if part)


def entries_embed(*, limit: int | None = None) -> int:
    """Embed the relevant entries that have no vector from the configured model yet, or whose
    summary changed since; returns how many were embedded (0 without semantic search)."""
    if not embeddings_enabled():
        return 0
    name = model_name()
    due = (
        Entry.objects.filter(platform_relevant=True)
        .filter(
            Q(embedding__isnull=True)
            | ~Q(embedding__model_name=name)
            | Q(summarised_at__gt=F("embedding__updated_at"))
        )
        .only("id", "title", "summary_translated", "summary_original")
        .order_by("-listed_at", "-id")
    )
    if limit is not None:
        due = due[:limit]
    done = 0
    batch: list[Entry] = []
    # A wire story that several sources carry is one text (title and summaries alike): the model
    # runs it once and every copy gets that vector, the one it would have got on its own.
    # Copies are published close together, and entries come newest first, so the run's recent
    # texts find nearly all of them.
    recent: dict[str, np.ndarray] = {}
    for entry in due.iterator(chunk_size=_BATCH):
        # Loaded here, at the first entry that needs a vector, not before.
        if not done and not batch and not embeddings_available():
            return 0
        batch.append(entry)
        if len(batch) == _BATCH:
            done += _embed_batch(batch, name, recent)
            batch = []
    if batch:
        done += _embed_batch(batch, name, recent)
    return done


def _embed_batch(entries: list[Entry], name: str, recent: dict[str, "np.ndarray"]) -> int:
    texts = [entry_embedding_text(entry) for entry in entries]
    new = [text for text in dict.fromkeys(texts) if text not in recent]
    if new:
        fresh = texts_embed(new, max_tokens=settings.NEWS_EMBEDDING_MAX_TOKENS)
        recent.update(zip(new, fresh, strict=True))
    vectors = [recent[text] for text in texts]
    # Oldest first out (a dict keeps insertion order).
    for stale in list(recent)[: max(len(recent) - _RECENT_TEXTS, 0)]:
        del recent[stale]
    now = timezone.now()
    EntryEmbedding.objects.bulk_create(
        [
            EntryEmbedding(
                entry_id=entry.pk, model_name=name, vector=vector.tobytes(), updated_at=now
            )
            for entry, vector in zip(entries, vectors, strict=True)
        ],
        update_conflicts=True,
        unique_fields=["entry"],
        update_fields=["model_name", "vector", "updated_at"],
    )
    return len(entries)
