"""The embedding step: only entries that need a vector are embedded, a batch at a time, and
every text gets its own vector back whatever else is embedded with it."""

import numpy as np
import pytest
from django.utils import timezone
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

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


# Texts as entries and queries have them: Swedish and English, a title alone, a long lead the
# 64-token cut shortens, an empty string; and any text at all.
SAMPLES = [
    "kort",
    "Apple Watch",
    "iPad mini får OLED-skärm enligt nya uppgifter från leverantörskedjan",
    "A much longer text about the battery life of the new iPhone and its charger " * 4,
    "Apple släpper iOS 27\nUppdateringen rättar fel.\nThe update fixes bugs.",
    "",
]
any_text = st.sampled_from(SAMPLES) | st.text(max_size=300)


@given(
    text=any_text,
    neighbours=st.lists(any_text, max_size=12),
    position=st.integers(min_value=0),
    max_tokens=st.sampled_from([None, 64]),
)
@hypothesis_settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_a_texts_vector_does_not_depend_on_its_batch_neighbours(
    semantic, text, neighbours, position, max_tokens
):
    # The int8 graph quantises each run's input with one scale over the whole run: a text that
    # shared a run with others (or their padding) would get another vector than alone.
    alone = texts_embed([text], max_tokens=max_tokens)[0]
    batch = list(neighbours)
    batch.insert(position % (len(batch) + 1), text)

    vectors = texts_embed(batch, max_tokens=max_tokens)

    for row in np.flatnonzero([candidate == text for candidate in batch]):
        np.testing.assert_allclose(vectors[row], alone, atol=1e-6)


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
