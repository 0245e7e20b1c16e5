"""`load_demo` fills every surface offline, through the real pipeline (the model's answers from
the demo's recording), and can run again."""

import io

import pytest
from django.core.management import call_command

from news_site.news.models import (
    Entry,
    Feed,
    FetchOutcome,
    GuidePageType,
    ProductGuide,
    SummaryState,
)
from news_site.podcasts.models import PodcastEpisode

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]


def test_load_demo_fills_the_database_offline_and_is_idempotent(http, settings):
    settings.FETCH_ALLOW_PRIVATE_NETWORKS = False
    out = io.StringIO()

    call_command("load_demo", stdout=out, stderr=io.StringIO())
    call_command("load_demo", stdout=io.StringIO(), stderr=io.StringIO())

    assert "1 failed" in out.getvalue()
    broken = Feed.objects.get(title="Trasig källa (demo)")
    assert broken.last_outcome == FetchOutcome.FAILED
    assert broken.last_error.startswith("not a readable feed")
    assert Entry.objects.count() == 43  # 44 items, one syndicated twice
    assert Entry.objects.filter(language="sv").exists()
    # The recorded model answers every entry (tests/news/ingest/test_demo_swedish.py).
    assert "43 summarised, 0 summaries failed" in out.getvalue()
    assert not Entry.objects.exclude(summary_state=SummaryState.TRANSLATED).exists()
    assert Entry.objects.filter(platform_relevant=False).count() >= 2
    assert PodcastEpisode.objects.count() == 3
    assert all(episode.chapters for episode in PodcastEpisode.objects.all())
    assert ProductGuide.objects.filter(page_type=GuidePageType.PRODUCT_HUB).count() == 26
    for page_type in GuidePageType.values:
        assert ProductGuide.objects.filter(page_type=page_type).exists()

    assert len(http.get("/entries.json").json()["entries"]) >= 10
    assert http.get("/iphone.md").status_code == 200
    assert "/iphone-18-rykten.md" in http.get("/llms.txt").text
    popular = http.get("/entries/popular.json").json()["entries"]
    latest = http.get("/entries.json").json()["entries"]
    assert [e["id"] for e in popular] != [e["id"] for e in latest]
