"""The search box: the API's search (search.selectors.entries_search), under the API's search
limit per client address, since a search that embeds its query costs the same either way."""

from django.conf import settings
from django.http import HttpRequest

from news_site.news.models import Entry
from news_site.search.selectors import entries_search
from shared.env import Rate
from shared.http import client_ip
from shared.ratelimit import usage_count

# As /api/v1/entries/search takes (api.serializers.SearchParams).
QUERY_MAX = 200
RESULTS_MAX = 30


def over_limit(request: HttpRequest) -> bool:
    """Count this search; whether the client is over NEWS_SEARCH_RATE_LIMIT (shared with the
    API's searches: one budget per address). An unreachable cache lets it through."""
    usage = usage_count(
        request,
        group="news-search",
        bucket=client_ip(request),
        rate=Rate.parse(settings.NEWS_SEARCH_RATE_LIMIT),
        policy="search",
    )
    return usage is not None and usage.exceeded


def entries_found(query: str) -> list[Entry]:
    found, _mode = entries_search(query=query, limit=RESULTS_MAX)
    return found
