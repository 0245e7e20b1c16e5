"""The embedding step: only entries that need a vector are embedded, a batch at a time, and
batching by length gives every text its own vector back."""

import numpy as np
import pytest
from django.utils import timezone

from news_site.search import services
from news_site.search.embeddings import model_name, texts_embed
from news_site.search.models import EntryEmbedding
from news_site.search.services import entries_embed, entry_embedding_text

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]


def test_only_entries_without_a_current_vector_are_embedded(
    make_feed, make_entry, semantic, monkeypatch
):
    # A batch of two: five due entries take three batches, and every one gets its vector.
    monkeypatch.setattr(services, "_BATCH", 2)
    feed = make_feed()
    due = [make_entry(feed, title=f"iPhone nyhet {n}") for n in range(5)]
    irrelevant = make_entry(feed, title="Elbil", platform_relevant=False)

    assert entries_embed() == 5
    stored = dict(EntryEmbedding.objects.values_list("entry_id", "updated_at"))
    assert set(stored) == {entry.pk for entry in due}
    assert irrelevant.pk not in stored

    # Nothing changed: nothing embedded again, no row rewritten.
    assert entries_embed() == 0
    assert dict(EntryEmbedding.objects.values_list("entry_id", "updated_at")) == stored

    # A summary rewritten after its vector, and a vector of another model, are due again.
    due[0].summarised_at = timezone.now()
    due[0].save(update_fields=["summarised_at"])
    EntryEmbedding.objects.filter(entry=due[1]).update(model_name="another-model")
    assert entries_embed() == 2
    assert set(EntryEmbedding.objects.values_list("model_name", flat=True)) == {model_name()}
    unchanged = EntryEmbedding.objects.exclude(entry__in=due[:2])
    assert all(stored[row.entry_id] == row.updated_at for row in unchanged)


def test_batches_sorted_by_length_give_each_text_its_own_vector(semantic):
    from news_site.search.embeddings import _model, on_model_thread

    encoder = _model()
    texts = [
        "kort",
        "A much longer text about the battery life of the new iPhone and its charger " * 4,
        "Apple Watch",
        "iPad mini får OLED-skärm enligt nya uppgifter från leverantörskedjan",
        "",
    ]
    together = on_model_thread(lambda: encoder.encode(texts, batch_size=2))
    one_by_one = np.vstack([on_model_thread(lambda t=t: encoder.encode([t])) for t in texts])

    assert together.shape == (5, 384)
    np.testing.assert_allclose(together, one_by_one, atol=1e-5)


def test_embedding_text_holds_title_and_both_summaries(make_feed, make_entry):
    entry = make_entry(
        make_feed(), title="Rubrik", summary_translated="Svenska.", summary_original="English."
    )
    assert entry_embedding_text(entry) == "Rubrik\nSvenska.\nEnglish."


def test_copies_of_one_text_get_the_vector_it_gets_alone(make_feed, make_entry, semantic):
    # A wire story carried by two sources, and a text of its own.
    wire = {
        "title": "Apple släpper iOS 27",
        "summary_original": "The update fixes bugs.",
        "summary_translated": "Uppdateringen rättar fel.",
    }
    copies = [make_entry(make_feed(), **wire) for _ in range(2)]
    other = make_entry(make_feed(), title="iPad mini får OLED")

    assert entries_embed() == 3
    stored = {
        row.entry_id: np.frombuffer(bytes(row.vector), dtype=np.float32)
        for row in EntryEmbedding.objects.all()
    }
    alone = texts_embed([entry_embedding_text(copies[0]), entry_embedding_text(other)])
    np.testing.assert_allclose(stored[copies[0].pk], alone[0], atol=1e-6)
    np.testing.assert_array_equal(stored[copies[1].pk], stored[copies[0].pk])
    np.testing.assert_allclose(stored[other.pk], alone[1], atol=1e-6)
