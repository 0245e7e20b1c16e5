"""From an address an editor pastes to the feed behind it, as feed readers do (Miniflux,
FreshRSS, Feedly): the address may be the feed itself or any page of the site.

1. The address is fetched (through the guarded fetcher). If it is a feed, that is the source.
2. If it is an HTML page, its `<link rel="alternate">` feeds are tried in document order.
3. Otherwise the common feed paths of the site are tried (`/feed`, `/rss`, ...).

The feed's own title and site address come with it, so the editor needs to type nothing else.
Every failure is a DiscoveryError with a code the surfaces turn into their own words.
"""

from dataclasses import dataclass
from enum import StrEnum
from urllib.parse import urljoin, urlsplit

from django.conf import settings
from lxml import html as lxml_html

from news_site.news.cleaning import clean_url
from news_site.news.parsing import UnreadableFeed, parse_feed
from shared.fetch import FetchError, FetchResult, fetch

FEED_TYPES = (
    "application/rss+xml",
    "application/atom+xml",
    "application/feed+json",
    "application/xml",
    "text/xml",
)
COMMON_PATHS = ("/feed", "/rss", "/feed.xml", "/rss.xml", "/atom.xml", "/index.xml", "/feed/")
# A page lists a few feeds at most; more is a page built to make us fetch.
MAX_CANDIDATES = 8
_HTML_TYPES = ("text/html", "application/xhtml+xml")


class DiscoveryProblem(StrEnum):
    INVALID_URL = "invalid_url"
    BLOCKED_ADDRESS = "blocked_address"
    UNREACHABLE = "unreachable"
    HTTP_ERROR = "http_error"
    NO_FEED = "no_feed"


class DiscoveryError(Exception):
    def __init__(self, problem: DiscoveryProblem, detail: str) -> None:
        super().__init__(detail)
        self.problem = problem
        self.detail = detail


@dataclass(frozen=True)
class DiscoveredFeed:
    url: str
    title: str
    site_url: str


def _get(url: str) -> FetchResult:
    return fetch(
        url,
        user_agent=settings.NEWS_FETCH_USER_AGENT,
        timeout=settings.NEWS_FETCH_TIMEOUT_SECONDS,
        max_bytes=settings.NEWS_FETCH_MAX_BYTES,
        headers={"Accept": "application/rss+xml, application/atom+xml, text/html;q=0.8, */*;q=0.5"},
    )


def _as_feed(result: FetchResult) -> DiscoveredFeed | None:
    content_type = result.headers.get("Content-Type", "").lower()
    if result.status_code != 200 or content_type.startswith(_HTML_TYPES):
        return None
    try:
        parsed = parse_feed(result.body, content_type=content_type, base_url=result.url)
    except UnreadableFeed:
        return None
    return DiscoveredFeed(url=result.url, title=parsed.title[:200], site_url=parsed.site_url)


def _alternate_links(result: FetchResult) -> list[str]:
    try:
        document = lxml_html.document_fromstring(result.body)
    except (ValueError, lxml_html.etree.ParserError):
        return []
    links: list[str] = []
    for link in document.iter("link"):
        rel = (link.get("rel") or "").lower().split()
        kind = (link.get("type") or "").lower().split(";")[0].strip()
        if "alternate" in rel and kind in FEED_TYPES and link.get("href"):
            url = clean_url(urljoin(result.url, link.get("href")))
            if url and url not in links:
                links.append(url)
    return links[:MAX_CANDIDATES]


def feed_discover(*, url: str) -> DiscoveredFeed:
    """The feed at or behind `url`. Raises DiscoveryError."""
    address = clean_url(url)
    if not address:
        raise DiscoveryError(DiscoveryProblem.INVALID_URL, "not an absolute http(s) address")
    try:
        first = _get(address)
    except FetchError as exc:
        problem = (
            DiscoveryProblem.BLOCKED_ADDRESS
            if exc.code == "blocked_address"
            else DiscoveryProblem.INVALID_URL
            if exc.code == "invalid_url"
            else DiscoveryProblem.UNREACHABLE
        )
        raise DiscoveryError(problem, exc.message) from exc
    if first.status_code >= 400:
        raise DiscoveryError(DiscoveryProblem.HTTP_ERROR, f"HTTP {first.status_code}")
    if (found := _as_feed(first)) is not None:
        return found
    origin = "{0.scheme}://{0.netloc}".format(urlsplit(first.url))
    candidates = _alternate_links(first) or [urljoin(origin, path) for path in COMMON_PATHS]
    for candidate in candidates:
        try:
            result = _get(candidate)
        except FetchError:
            continue
        if (found := _as_feed(result)) is not None:
            if not found.site_url:
                found = DiscoveredFeed(found.url, found.title, clean_url(first.url))
            return found
    raise DiscoveryError(DiscoveryProblem.NO_FEED, "neither a feed nor a page that links to one")
