"""What an entry's vector reads: its title and summaries up to NEWS_EMBEDDING_MAX_TOKENS
tokens (the model's time per entry grows with them), while a query is read to the model's own
limit."""

import numpy as np
import pytest

from news_site.search.embeddings import texts_embed
from news_site.search.models import EntryEmbedding
from news_site.search.services import entries_embed

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]

LEAD = "Apple släpper iOS 26 med nya funktioner för iPhone och iPad. " * 6


def _vectors(*entries) -> list[np.ndarray]:
    stored = dict(EntryEmbedding.objects.values_list("entry_id", "vector"))
    return [np.frombuffer(stored[entry.pk], dtype=np.float32) for entry in entries]


def test_words_past_the_limit_do_not_change_an_entrys_vector(
    make_feed, make_entry, semantic, settings
):
    settings.NEWS_EMBEDDING_MAX_TOKENS = 64
    feed = make_feed()
    first = make_entry(feed, title="iOS 26", summary_original=LEAD + "Batteriet räcker längre.")
    second = make_entry(feed, title="iOS 26", summary_original=LEAD + "Priset är oförändrat.")
    early = make_entry(feed, title="macOS 26", summary_original=LEAD + "Priset är oförändrat.")

    assert entries_embed() == 3

    one, two, other = _vectors(first, second, early)
    np.testing.assert_array_equal(one, two)
    # A difference within the limit (the title) still counts.
    assert float(one @ other) < 0.999


def test_the_whole_text_counts_below_the_models_limit(make_feed, make_entry, semantic, settings):
    settings.NEWS_EMBEDDING_MAX_TOKENS = 512
    feed = make_feed()
    first = make_entry(feed, title="iOS 26", summary_original=LEAD + "Batteriet räcker längre.")
    second = make_entry(feed, title="iOS 26", summary_original=LEAD + "Priset är oförändrat.")

    entries_embed()

    one, two = _vectors(first, second)
    assert float(one @ two) < 0.9999


def test_a_query_is_read_to_the_models_own_limit(semantic):
    long_query = LEAD + "Batteriet räcker längre."
    other_ending = LEAD + "Priset är oförändrat."

    vectors = texts_embed([long_query, other_ending])

    assert float(vectors[0] @ vectors[1]) < 0.9999
    # The same texts cut at 64 tokens are one text.
    cut = texts_embed([long_query, other_ending], max_tokens=64)
    np.testing.assert_allclose(cut[0], cut[1], atol=1e-6)
