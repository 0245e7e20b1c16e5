"""The news admin's lists stay narrow: short ISO dates with the zone, podcast lengths as
h:mm:ss."""

from datetime import UTC, datetime

import pytest

from tests.support.news_factories import EpisodeFactory

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]


def test_entry_list_dates_are_short(editor_client, make_feed, make_entry):
    make_entry(make_feed(), published_at=datetime(2026, 11, 25, 20, 10, tzinfo=UTC))
    page = editor_client.get("/admin/news/entry/").content.decode()
    assert "2026-11-25 21:10 CET" in page
    assert "november 2026" not in page


@pytest.mark.parametrize(("seconds", "shown"), [(3725, "1:02:05"), (59, "0:00:59"), (None, "-")])
def test_podcast_lengths_are_hours_minutes_seconds(editor_client, seconds, shown):
    EpisodeFactory(title="Avsnittet", duration_seconds=seconds)
    page = editor_client.get("/admin/podcasts/podcastepisode/").content.decode()
    assert f'<td class="field-length">{shown}</td>' in page
