"""The review queue of the model's summaries, as an editor works through it: newest first with
the article beside the summary, approve in bulk, correct in place, see the offline fallbacks and
why."""

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from news_site.news.models import Entry, SummaryState

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]

QUEUE = "/admin/news/summaryreview/"


@pytest.fixture
def work(make_feed, make_entry):
    feed = make_feed(title="MacRumors")
    now = timezone.now()

    def entry(title: str, state: str, *, hours_ago: float, **fields) -> Entry:
        return make_entry(
            feed,
            title=title,
            summary_state=state,
            summary_translated=f"Sammanfattning av {title}.",
            summarised_at=now - timedelta(hours=hours_ago),
            **fields,
        )

    return {
        "older": entry("Äldre modellsammanfattning", SummaryState.TRANSLATED, hours_ago=5),
        "newer": entry("Nyare modellsammanfattning", SummaryState.TRANSLATED, hours_ago=1),
        "approved": entry(
            "Redan godkänd",
            SummaryState.TRANSLATED,
            hours_ago=3,
            summary_reviewed_at=now - timedelta(hours=2),
        ),
        "resummarised": entry(
            "Sammanfattad igen efter godkännande",
            SummaryState.TRANSLATED,
            hours_ago=2,
            summary_reviewed_at=now - timedelta(hours=4),
        ),
        "offline": entry(
            "Offline-utdrag",
            SummaryState.EXTRACTED,
            hours_ago=1,
            summary_error="model unavailable: HTTP 503",
        ),
        "edited": entry("Redaktörens egen", SummaryState.EDITED, hours_ago=1),
    }


def _titles(html: str) -> list[str]:
    return re.findall(r'rel="noopener">([^<]+)</a>', html)


def test_the_queue_lists_unreviewed_model_summaries_newest_first_beside_the_article(
    editor_client, work
):
    page = editor_client.get(QUEUE)
    html = page.content.decode()

    assert page.status_code == 200
    assert _titles(html) == [
        "Nyare modellsammanfattning",
        "Sammanfattad igen efter godkännande",
        "Äldre modellsammanfattning",
    ]
    assert f'href="{work["newer"].url}"' in html  # the article, to read beside the summary
    assert "MacRumors" in html
    assert "<h1>Granska AI-sammanfattningar</h1>" in html


def test_approving_takes_entries_out_of_the_queue(editor_client, work):
    answer = editor_client.post(
        QUEUE,
        {"action": "approve", "_selected_action": [work["newer"].pk, work["older"].pk]},
    )
    assert answer.status_code == 302

    html = editor_client.get(QUEUE).content.decode()
    assert _titles(html) == ["Sammanfattad igen efter godkännande"]
    reviewed = editor_client.get(QUEUE, {"visa": "granskade"}).content.decode()
    assert "Nyare modellsammanfattning" in reviewed and "Redan godkänd" in reviewed


def test_a_correction_in_place_is_the_editors_and_reviewed(editor_client, work):
    page = editor_client.get(QUEUE)
    html = page.content.decode()
    rows = re.findall(r'name="(form-\d+-id)" value="(\d+)"', html)
    data = {
        "form-TOTAL_FORMS": str(len(rows)),
        "form-INITIAL_FORMS": str(len(rows)),
        "_save": "Spara",
    }
    for index, (_name, pk) in enumerate(rows):
        entry = Entry.objects.get(pk=pk)
        data[f"form-{index}-id"] = pk
        data[f"form-{index}-summary_translated"] = entry.summary_translated
    target = next(i for i, (_n, pk) in enumerate(rows) if int(pk) == work["older"].pk)
    data[f"form-{target}-summary_translated"] = "Rättad av redaktören."

    answer = editor_client.post(QUEUE, data)

    assert answer.status_code == 302, answer.content.decode()[:2000]
    corrected = Entry.objects.get(pk=work["older"].pk)
    assert corrected.summary_translated == "Rättad av redaktören."
    assert corrected.summary_state == SummaryState.EDITED
    assert corrected.summary_reviewed_at is not None
    untouched = Entry.objects.get(pk=work["newer"].pk)
    assert untouched.summary_state == SummaryState.TRANSLATED
    assert untouched.summary_reviewed_at is None


def test_the_offline_filter_shows_the_fallbacks_and_why(editor_client, work):
    html = editor_client.get(QUEUE, {"visa": "offline"}).content.decode()
    assert _titles(html) == ["Offline-utdrag"]
    assert "model unavailable: HTTP 503" in html
