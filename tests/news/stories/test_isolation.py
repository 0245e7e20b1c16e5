"""One entry whose assignment raises never stops clustering: it is skipped, its reason kept on
the entry and counted in the run's summary line, and later runs leave it alone until an editor
clears the reason. Driven by real feeds through `ingest` and by stored data."""

import io
from datetime import UTC, datetime, timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from news_site.news.models import Entry
from news_site.stories.clustering import stories_cluster

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]

# "\u017firi" (long s): the entity pattern matches it case-insensitively as the alias "siri", but
# its lower case is not a key of the alias table, so scoring this entry raises KeyError.
ITEMS = [
    {
        "guid": "a",
        "link": "https://m.example/a",
        "title": "iPhone 18 Pro will hide Face ID under the display",
    },
    {
        "guid": "b",
        "link": "https://m.example/b",
        "title": "Apple \u017firi gets a new voice in iOS 27",
    },
    {
        "guid": "c",
        "link": "https://m.example/c",
        "title": "iPhone 18 Pro rumored to feature under-display Face ID",
    },
]


def _ingest() -> str:
    out = io.StringIO()
    call_command("ingest", stdout=out, stderr=io.StringIO())
    return out.getvalue().strip().splitlines()[-1]


def test_an_entry_that_fails_assignment_is_skipped_recorded_and_not_retried(
    server, private_fetching, rss, settings, caplog
):
    settings.NEWS_LLM_BASE_URL = ""
    server.respond("/feed.xml", body=rss(ITEMS))
    call_command("add_feed", server.url("/feed.xml"), "--no-discover")

    line = _ingest()

    bad = Entry.objects.get(url="https://m.example/b")
    good = Entry.objects.exclude(pk=bad.pk)
    assert good.count() == 2
    assert all(entry.story_id is not None for entry in good)
    # Both reports of the same event share a story: the batch went on after the failure.
    assert len({entry.story_id for entry in good}) == 1
    assert bad.story_id is None
    assert bad.story_error.startswith("KeyError")
    assert "stories: 2 entries assigned" in line
    assert "1 failed;" in line
    assert f"entry {bad.pk} not clustered: KeyError" in caplog.text

    # The next run does not try it again.
    assert stories_cluster().failed == 0
    bad.refresh_from_db()
    assert bad.story_id is None

    # An editor clearing the reason puts it back in the queue (where it fails again, once).
    Entry.objects.filter(pk=bad.pk).update(story_error="")
    assert stories_cluster().failed == 1


def test_an_entry_dated_in_year_one_does_not_stop_the_run(make_feed, make_entry):
    """Stored before dates were cleaned: the run's window (its oldest entry minus the link
    span) overflowed and no entry was clustered."""
    now = timezone.now()
    old = make_entry(make_feed(), title="iPhone 18 Pro Face ID", platform_relevant=True)
    Entry.objects.filter(pk=old.pk).update(listed_at=datetime(1, 1, 1, tzinfo=UTC))
    recent = make_entry(
        make_feed(),
        title="iPhone 18 Pro gets Face ID under the display",
        published_at=now - timedelta(hours=1),
        platform_relevant=True,
    )

    report = stories_cluster()

    assert report.entries_assigned == 2
    assert Entry.objects.filter(pk__in=[old.pk, recent.pk], story__isnull=True).count() == 0
