"""Fetching for the news steps: the fetcher a step is given, and the production one."""

from typing import Protocol

from django.conf import settings

from shared.fetch import FetchResult, fetch


class Fetcher(Protocol):
    def __call__(
        self, url: str, *, headers: dict[str, str], max_bytes: int | None = None
    ) -> FetchResult: ...


def http_fetch(url: str, *, headers: dict[str, str], max_bytes: int | None = None) -> FetchResult:
    """The production fetcher: shared.fetch with the service's User-Agent, deadline and cap."""
    return fetch(
        url,
        user_agent=settings.NEWS_FETCH_USER_AGENT,
        timeout=settings.NEWS_FETCH_TIMEOUT_SECONDS,
        max_bytes=max_bytes or settings.NEWS_FETCH_MAX_BYTES,
        headers=headers,
    )
