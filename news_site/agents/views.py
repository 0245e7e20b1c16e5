"""The agents' surfaces: markdown (also on the pages for people's URLs, by Accept: news_site.pages
asks here), /llms.txt, guides as markdown."""

import hashlib

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.utils import timezone
from django.utils.cache import patch_vary_headers
from django.utils.http import quote_etag
from django.views.decorators.http import require_safe

from news_site.agents import documents
from news_site.news import selectors
from news_site.news.http import public

INDEX_SIZE = 50


def _base_url(request: HttpRequest) -> str:
    return request.build_absolute_uri("/").rstrip("/")


def _markdown(text: str, content_type: str = "text/markdown; charset=utf-8") -> HttpResponse:
    response = HttpResponse(text, content_type=content_type)
    # Agent pages are for reading, not for search results; they never set cookies.
    response["X-Robots-Tag"] = "noindex"
    return public(response)


def negotiated(response: HttpResponse) -> HttpResponse:
    """A response of a URL that answers HTML or markdown by Accept (agents.negotiation)."""
    patch_vary_headers(response, ["Accept"])
    return response


def _entry_or_404(entry_id: int):
    entry = selectors.entry_get(entry_id=entry_id)
    if entry is None:
        raise Http404("no such entry")
    return entry


def entry_markdown_response(request: HttpRequest, entry) -> HttpResponse:
    return _markdown(
        documents.entry_markdown(
            entry, base_url=_base_url(request), site_name=settings.NEWS_SITE_NAME
        )
    )


def index_markdown_response(request: HttpRequest) -> HttpResponse:
    entries = selectors.entry_list()[:INDEX_SIZE]
    text = documents.index_markdown(
        entries,
        base_url=_base_url(request),
        site_name=settings.NEWS_SITE_NAME,
        now=timezone.now(),
    )
    response = _markdown(text)
    # The front matter's generated_at differs on every answer; the list after it is what a
    # poller's copy must match (shared/conditional.py dates the ETag).
    listing = text.split("\n---\n", 1)[-1]
    response["ETag"] = quote_etag(hashlib.md5(listing.encode(), usedforsecurity=False).hexdigest())
    return response


@require_safe
def entry_markdown(request: HttpRequest, entry_id: int) -> HttpResponse:
    return entry_markdown_response(request, _entry_or_404(entry_id))


@require_safe
def index_markdown(request: HttpRequest) -> HttpResponse:
    return index_markdown_response(request)


@require_safe
def guide_markdown(request: HttpRequest, slug: str) -> HttpResponse:
    guide = selectors.guide_get(slug=slug)
    if guide is None:
        raise Http404("no such guide")
    return _markdown(documents.guide_markdown(guide, base_url=_base_url(request)))


@require_safe
def llms_txt(request: HttpRequest) -> HttpResponse:
    text = documents.llms_txt(
        selectors.guide_list(), base_url=_base_url(request), site_name=settings.NEWS_SITE_NAME
    )
    return _markdown(text, content_type="text/plain; charset=utf-8")
