"""Repeated tool calls within NEWS_RESPONSE_CACHE_SECONDS are answered from the process's
memory (news_site/mcp/answers.py): no database read, the same answer, fresh again after the
time is up. Errors are never kept."""

import time
from types import SimpleNamespace

from news_site.mcp import answers
from news_site.news.models import Entry
from tests.support.news_factories import GuideFactory


def test_a_repeated_call_is_answered_without_reading_the_database(
    mcp_server, settings, make_feed, make_entry, served_queries, monkeypatch
):
    # The cache's clock moves only when the test says, so a slow call cannot outlive the answer.
    clock = SimpleNamespace(now=time.monotonic())
    monkeypatch.setattr(answers, "time", SimpleNamespace(monotonic=lambda: clock.now))
    settings.NEWS_RESPONSE_CACHE_SECONDS = 1
    entry = make_entry(make_feed(title="MacRumors"), title="iPhone 18 får ny kamera")
    with served_queries.at_most(2):
        first = mcp_server.call("latest_news", {"limit": 5})
    Entry.objects.filter(pk=entry.pk).update(title="Rubriken ändrades")

    with served_queries.none():
        again = mcp_server.call("latest_news", {"limit": 5})
    assert again.structured_content == first.structured_content
    assert again.structured_content["entries"][0]["title"] == "iPhone 18 får ny kamera"

    other_arguments = mcp_server.call("latest_news", {"limit": 4})
    assert other_arguments.structured_content["entries"][0]["title"] == "Rubriken ändrades"

    clock.now += 1.1
    fresh = mcp_server.call("latest_news", {"limit": 5})
    assert fresh.structured_content["entries"][0]["title"] == "Rubriken ändrades"


def test_an_error_is_not_kept(mcp_server, settings):
    settings.NEWS_RESPONSE_CACHE_SECONDS = 60
    assert mcp_server.call("get_product_guide", {"slug": "iphone-18"}).is_error is True
    GuideFactory(
        slug="iphone-18", title="iPhone 18", page_type="generation_hub", body="Om iPhone 18."
    )
    found = mcp_server.call("get_product_guide", {"slug": "iphone-18"})
    assert found.is_error is False
    assert found.structured_content["slug"] == "iphone-18"
