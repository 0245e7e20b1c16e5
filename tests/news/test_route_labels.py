"""Metric and access-log labels are Django's own routes: every news URL pattern is a path()
with converters, so a label names its parameters and never shows a regular expression."""

import pytest
from django.urls import URLResolver, get_resolver
from django.urls.resolvers import RoutePattern

from shared.metrics import UNMATCHED_ROUTE
from shared.observability import route_for_path


def _patterns(resolver: URLResolver):
    for entry in resolver.url_patterns:
        yield entry
        if isinstance(entry, URLResolver):
            yield from _patterns(entry)


def test_every_news_url_pattern_is_a_route_not_a_regex():
    regexes = [
        str(entry.pattern)
        for entry in _patterns(get_resolver())
        if not isinstance(entry.pattern, RoutePattern)
        # The admin's own app index and catch-all are Django's regular expressions.
        and getattr(entry, "app_name", None) != "admin"
        and not str(entry.pattern).startswith(("^(?P<app_label>", "(?P<url>"))
    ]

    assert regexes == []


@pytest.mark.parametrize(
    ("path", "label"),
    [
        ("/entries/7.json", "/entries/<id:entry_id>.json"),
        ("/api/v1/entries/7", "/api/v1/entries/<id:entry_id>"),
        ("/api/v1/stories/7-a-slug", "/api/v1/stories/<id_slug:story_id>"),
        ("/api/v1/tags/ai_news", "/api/v1/tags/<tag_slug:slug>"),
        ("/api/v1/tags/ai-news/entries", "/api/v1/tags/<tag_slug:slug>/entries"),
        ("/api/v1/podd_episodes/urn:ep/1", "/api/v1/podd_episodes/<episode_id:episode_id>"),
        ("/om-tjansten.md", "/<guide_slug:slug>.md"),
        ("/api/v1/no/such/thing", "/api/v1/<any_path:path>"),
        ("/api/v1/", "/api/v1/"),
        ("/", "/"),
        ("/admin/news/", "/admin/<app_label>/"),
        ("/Not-A-Guide.md", UNMATCHED_ROUTE),
    ],
)
def test_paths_get_the_route_of_the_pattern_that_answers(path, label):
    assert route_for_path(path) == label
