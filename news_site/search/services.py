"""Writes of the search app: the embedding step of ingestion.

The one place entries get their vectors. Only entries that need one (no vector, a vector of
another model, or a summary rewritten since) are read, a batch at a time; the model is loaded
only once there is such an entry, so a run with nothing new never imports the model's
libraries, and then only once per process (the task worker keeps it for its next runs).
"""

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

# Entries read and written per database round trip; the model itself runs them in smaller
# batches (embeddings.ENCODE_BATCH), so memory stays flat whatever the backlog.
_BATCH = 256


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
    for entry in due.iterator(chunk_size=_BATCH):
        # Loaded here, at the first entry that needs a vector, not before.
        if not done and not batch and not embeddings_available():
            return 0
        batch.append(entry)
        if len(batch) == _BATCH:
            done += _embed_batch(batch, name)
            batch = []
    if batch:
        done += _embed_batch(batch, name)
    return done


def _embed_batch(entries: list[Entry], name: str) -> int:
    vectors = texts_embed([entry_embedding_text(entry) for entry in entries])
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
