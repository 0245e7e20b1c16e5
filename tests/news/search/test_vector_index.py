"""The in-process vector index (int8 rows with a scale each): its scores are within 0.005 of
exact float32 similarity, it picks up re-embedded entries without keeping their old vectors,
and it stays correct when later refreshes are merged."""

from datetime import timedelta

import numpy as np
import pytest
from django.utils import timezone

from news_site.search import vector_index
from news_site.search.embeddings import model_name
from news_site.search.models import EntryEmbedding
from news_site.search.vector_index import VectorIndex

pytestmark = pytest.mark.every_backend

DIMENSIONS = 384


@pytest.fixture
def index(settings):
    settings.NEWS_SEMANTIC_REFRESH_SECONDS = 0
    return VectorIndex()


def unit_vectors(rng, count):
    vectors = rng.standard_normal((count, DIMENSIONS)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def store(entry, vector, *, at=None):
    EntryEmbedding.objects.update_or_create(
        entry=entry,
        defaults={
            "model_name": model_name(),
            "vector": vector.tobytes(),
            "updated_at": at or timezone.now(),
        },
    )


def test_rankings_match_exact_similarity(db, index, make_feed, make_entry):
    rng = np.random.default_rng(3)
    feed = make_feed()
    entries = [make_entry(feed) for _ in range(60)]
    vectors = unit_vectors(rng, len(entries))
    for entry, vector in zip(entries, vectors, strict=True):
        store(entry, vector)
    query = vectors[7] + 0.3 * unit_vectors(rng, 1)[0]
    query /= np.linalg.norm(query)

    hits = index.nearest(query, 10)

    exact = {entry.pk: float(score) for entry, score in zip(entries, vectors @ query, strict=True)}
    assert hits[0][0] == entries[7].pk
    for entry_id, score in hits:
        assert score == pytest.approx(exact[entry_id], abs=0.005)
    # Near-ties may swap at int8 precision; everything clearly in the exact top 10 is found.
    tenth = sorted(exact.values(), reverse=True)[9]
    clearly_in = {entry_id for entry_id, score in exact.items() if score > tenth + 0.01}
    assert len(clearly_in) >= 5
    assert clearly_in <= {entry_id for entry_id, _ in hits}


def test_a_re_embedded_entry_is_found_by_its_new_vector_only(db, index, make_feed, make_entry):
    rng = np.random.default_rng(5)
    feed = make_feed()
    first, second = make_entry(feed), make_entry(feed)
    old, new, other = unit_vectors(rng, 3)
    start = timezone.now() - timedelta(minutes=5)
    store(first, old, at=start)
    store(second, other, at=start)
    assert index.nearest(old, 1)[0][0] == first.pk

    store(first, new)

    assert index.nearest(new, 1)[0] == (first.pk, pytest.approx(1, abs=0.005))
    assert all(score < 0.5 for _, score in index.nearest(old, 2))


def test_merged_refreshes_keep_every_live_vector(db, index, make_feed, make_entry):
    rng = np.random.default_rng(11)
    feed = make_feed()
    start = timezone.now() - timedelta(hours=1)
    entries = [make_entry(feed) for _ in range(vector_index._MAX_BLOCKS + 4)]
    vectors = unit_vectors(rng, len(entries))
    for i, (entry, vector) in enumerate(zip(entries, vectors, strict=True)):
        store(entry, vector, at=start + timedelta(seconds=i))
        index.nearest(vector, 1)
    assert len(index._parts) <= vector_index._MAX_BLOCKS

    for entry, vector in zip(entries, vectors, strict=True):
        assert index.nearest(vector, 1)[0][0] == entry.pk
