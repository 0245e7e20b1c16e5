"""The news service's pages for people: server-rendered, Swedish, no script. Every page is an
anonymous read, the same for every reader, and is cached like the other public surfaces
(news.http.public: clients, nginx and the per-process response cache). `/` and `/entries/N`
answer markdown to agents that ask for it (agents.negotiation)."""

from django.conf import settings
from django.core.paginator import EmptyPage, Page, PageNotAnInteger, Paginator
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from news_site.agents.negotiation import prefers_markdown
from news_site.agents.views import entry_markdown_response, index_markdown_response, negotiated
from news_site.news import selectors
from news_site.news.cleaning import clean_url
from news_site.news.counts import feed_entry_counts_kept
from news_site.news.http import public
from news_site.news.models import Entry, GuidePageType
from news_site.pages import searching
from news_site.pages.cards import cards, entry_card
from news_site.podcasts.links import episode_moved
from news_site.podcasts.selectors import episode_get, episode_list
from news_site.stories.selectors import card_entries, story_entries, story_get
from shared.markdown_html import markdown_html

# A phone shows a card in about half a screen: a dozen is a page worth scrolling.
CARDS_PER_PAGE = 12
EPISODES_MAX = 100
# The guide list's sections, in the order a reader looks for them.
GUIDE_SECTIONS = (
    (GuidePageType.PRODUCT_HUB, "Produkter"),
    (GuidePageType.FAMILY_HUB, "Produktfamiljer"),
    (GuidePageType.GENERATION_HUB, "Generationer"),
    (GuidePageType.RUMOR, "Rykten"),
)


# What a page changes in the API's policy (django-csp's csp_update and csp_replace, set on the
# response): it adds its one inline style block, the sources' images and fetches of this site
# (tools that read a page from inside it, as Lighthouse fetches /robots.txt), and lets the search
# box (a GET form to this site) submit. Scripts, frames and plugins stay forbidden.
PAGE_CSP_ADDED = {
    "img-src": ["https:", "data:"],
    "style-src": ["'unsafe-inline'"],
    "connect-src": ["'self'"],
}
PAGE_CSP_REPLACED = {"form-action": ["'self'"]}


def _render(request: HttpRequest, template: str, context: dict, status: int = 200) -> HttpResponse:
    context = {**context, "site_name": settings.NEWS_SITE_NAME}
    response = render(request, template, context, status=status)
    response._csp_update = PAGE_CSP_ADDED  # type: ignore[attr-defined]
    response._csp_replace = PAGE_CSP_REPLACED  # type: ignore[attr-defined]
    return response


def _page(request: HttpRequest, template: str, context: dict) -> HttpResponse:
    return public(_render(request, template, context))


def _numbered(request: HttpRequest, items: QuerySet[Entry]) -> Page:
    """The `?sida=N` page of a card list; a page that does not exist is a 404."""
    try:
        return Paginator(items, CARDS_PER_PAGE).page(request.GET.get("sida", "1"))
    except (EmptyPage, PageNotAnInteger):
        raise Http404("no such page") from None


def _card_list(request: HttpRequest, entries: QuerySet[Entry], context: dict) -> HttpResponse:
    page = _numbered(request, entries)
    return _page(request, "pages/cards.html", {**context, "page": page, "cards": cards(page)})


@require_safe
def home(request: HttpRequest) -> HttpResponse:
    if prefers_markdown(request.headers.get("Accept", "")):
        return negotiated(index_markdown_response(request))
    page = _numbered(request, card_entries())
    context = {"page": page, "cards": cards(page), "is_home": True}
    return negotiated(_page(request, "pages/cards.html", context))


@require_safe
def story(request: HttpRequest, story_id: int) -> HttpResponse:
    found = story_get(story_id=story_id)
    if found is None:
        raise Http404("no such story")
    articles = [entry_card(entry) for entry in story_entries(story=found)]
    return _page(request, "pages/story.html", {"story": found, "cards": articles})


@require_safe
def entry(request: HttpRequest, entry_id: int) -> HttpResponse:
    found = selectors.entry_get(entry_id=entry_id)
    if found is None:
        raise Http404("no such entry")
    if prefers_markdown(request.headers.get("Accept", "")):
        return negotiated(entry_markdown_response(request, found))
    story_found = story_get(story_id=found.story_id) if found.story_id else None
    context = {
        "entry": found,
        "card": entry_card(found),
        "story": story_found,
        # Stored before ingest cleaned URLs, a link may be unusable: no link rather than a bad one.
        "original": clean_url(found.url),
    }
    return negotiated(_page(request, "pages/entry.html", context))


@require_safe
def guides(request: HttpRequest) -> HttpResponse:
    listed = list(selectors.guide_list())
    sections = [
        (heading, [guide for guide in listed if guide.page_type == kind])
        for kind, heading in GUIDE_SECTIONS
    ]
    return _page(request, "pages/guides.html", {"sections": [s for s in sections if s[1]]})


@require_safe
def guide(request: HttpRequest, slug: str) -> HttpResponse:
    found = selectors.guide_get(slug=slug)
    if found is None:
        raise Http404("no such guide")
    context = {"guide": found, "body": markdown_html(found.body)}
    return _page(request, "pages/guide.html", context)


@require_safe
def episodes(request: HttpRequest) -> HttpResponse:
    return _page(request, "pages/episodes.html", {"episodes": episode_list()[:EPISODES_MAX]})


@require_safe
def episode(request: HttpRequest, episode_id: str) -> HttpResponse:
    found = episode_get(episode_id=episode_id)
    if found is None:
        moved = episode_moved(request, old_id=episode_id, route="episode")
        if moved is None:
            raise Http404("no such episode")
        return moved
    context = {
        "episode": found,
        "audio": clean_url(found.audio_url),
        "page": clean_url(found.page_url),
        "minutes": round(found.duration_seconds / 60) if found.duration_seconds else None,
    }
    return _page(request, "pages/episode.html", context)


@require_safe
def tags(request: HttpRequest) -> HttpResponse:
    return _page(request, "pages/tags.html", {"tags": selectors.tag_list_with_entries()})


@require_safe
def tag(request: HttpRequest, slug: str) -> HttpResponse:
    found = selectors.tag_get_by_slug(slug=slug)
    if found is None:
        raise Http404("no such tag")
    context = {"heading": f"Taggat {found.name}", "tag": found}
    return _card_list(request, selectors.entry_list(tag=found), context)


@require_safe
def sources(request: HttpRequest) -> HttpResponse:
    counts = feed_entry_counts_kept()
    listed = [(feed, counts.get(feed.pk, 0)) for feed in selectors.feed_list()]
    return _page(request, "pages/sources.html", {"sources": listed})


@require_safe
def source(request: HttpRequest, feed_id: int) -> HttpResponse:
    found = selectors.feed_get(feed_id=feed_id)
    if found is None:
        raise Http404("no such source")
    context = {"heading": f"Från {found.title}", "source": found}
    return _card_list(request, selectors.entry_list(feed=found), context)


@require_safe
def search(request: HttpRequest) -> HttpResponse:
    query = " ".join(request.GET.get("q", "").split())[: searching.QUERY_MAX]
    if not query:
        return _page(request, "pages/search.html", {"query": "", "cards": None})
    if searching.over_limit(request):
        context = {"query": query, "refused": True}
        return _render(request, "pages/search.html", context, status=429)
    found = searching.entries_found(query)
    context = {"query": query, "cards": [entry_card(entry) for entry in found]}
    return _page(request, "pages/search.html", context)
