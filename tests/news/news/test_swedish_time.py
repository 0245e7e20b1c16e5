"""Swedish relative time as people write it (not Django humanize's "2 timmar sedan")."""

from datetime import UTC, datetime, timedelta

import pytest

from news_site.news.swedish import long_date, relative_time

# 15:00 in Stockholm (CET, UTC+1) on a Wednesday.
NOW = datetime(2025, 3, 5, 14, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("ago", "expected"),
    [
        (timedelta(seconds=20), "just nu"),
        (timedelta(seconds=-300), "just nu"),
        (timedelta(minutes=1), "för en minut sedan"),
        (timedelta(minutes=12), "för 12 minuter sedan"),
        (timedelta(hours=1, minutes=5), "för en timme sedan"),
        (timedelta(hours=2), "för 2 timmar sedan"),
        (timedelta(hours=20), "i går"),
        (timedelta(hours=40), "i förrgår"),
        (timedelta(days=4), "för 4 dagar sedan"),
        (timedelta(days=8), "för en vecka sedan"),
        (timedelta(days=20), "för 2 veckor sedan"),
        (timedelta(days=45), "för en månad sedan"),
        (timedelta(days=100), "för 3 månader sedan"),
        (timedelta(days=400), "för ett år sedan"),
        (timedelta(days=800), "för 2 år sedan"),
    ],
)
def test_relative_time_reads_like_swedish(ago, expected):
    assert relative_time(NOW - ago, now=NOW) == expected


def test_yesterday_follows_the_stockholm_calendar_not_utc():
    # 00:30 in Stockholm; 23:00 the evening before is "i går" only after six hours.
    now = datetime(2025, 3, 5, 23, 30, tzinfo=UTC)  # 00:30 on 6 March in Stockholm
    assert relative_time(now - timedelta(hours=2), now=now) == "för 2 timmar sedan"
    assert relative_time(now - timedelta(hours=8), now=now) == "i går"


def test_long_dates_use_swedish_month_names():
    assert long_date(NOW) == "5 mars 2025"
