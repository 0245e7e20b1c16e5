"""The twelve read-only tools of /mcp. Each answers with the markdown surfaces' content cut as
readable text plus the same data as structured content (shapes in `shapes.py`).

Arguments are validated by the SDK from the type hints (a bad argument is a tool error result);
every database read runs in a worker thread so the event loop keeps serving other requests.
A repeated call within NEWS_RESPONSE_CACHE_SECONDS is answered from memory (`answers.py`).
"""

import inspect
import json
import logging
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal, TypeVar, get_args

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import close_old_connections
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, Resource, TextContent, ToolAnnotations
from pydantic import AfterValidator, AnyUrl, Field

from news_site.agents import documents
from news_site.agents.escaping import markdown_link, markdown_text
from news_site.mcp import resources, shapes
from news_site.mcp.answers import kept_answer
from news_site.mcp.server import ToolServer, package_version
from news_site.news import selectors
from news_site.news.converters import MAX_ID
from news_site.news.models import Entry, GuidePageType, Story
from news_site.podcasts import selectors as podcast_selectors
from news_site.search.selectors import entries_search
from news_site.stories import selectors as story_selectors
from shared.outages import DATABASE_ERRORS, is_pool_exhausted, restart_pool, retry_after_seconds
from shared.outages import MESSAGE as OUTAGE_MESSAGE

logger = logging.getLogger(__name__)

# Set by the dispatcher on each request's scope: the public base URL, as Django would build it.
BASE_URL_SCOPE_KEY = "news_site.base_url"

Limit = Annotated[int, Field(ge=1, le=50, description="How many items, 1 to 50.")]
Id = Annotated[int, Field(ge=1, le=MAX_ID)]
PageType = Literal["product_hub", "family_hub", "generation_hub", "rumor"]
assert set(get_args(PageType)) == set(GuidePageType.values)


def _no_nul(value: str) -> str:
    # No text column or search can hold NUL; refused here it is a clean tool error, where deep
    # in the database driver it would be a failure with a traceback for nothing but bad input.
    if "\x00" in value:
        raise ValueError("must not contain NUL characters")
    return value


NoNul = AfterValidator(_no_nul)
_READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)


class NewsServer(ToolServer):
    """The tools below, and the product guides as resources (`resources.py`)."""

    async def list_resources(self) -> list[Resource]:
        return await resources.guide_resources(_read)

    async def read_resource(
        self, uri: AnyUrl | str, context: Context[Any, Any] | None = None
    ) -> list[ReadResourceContents]:
        base_url = _base_url(context) if context is not None else ""
        return await resources.guide_read(str(uri), read=_read, base_url=base_url)


server = NewsServer(
    "news",
    title="Nyhetstjänsten",
    version=package_version(),
    instructions=(
        "Swedish summaries of news about Apple and its products, with product guides and the "
        "service's podcast. Answers hold metadata and summaries, never an article's text. "
        "Credit the source with a link: 'enligt <källa>, via <tjänsten>'. The product guides "
        "are also resources (news://guides/<slug>, markdown)."
    ),
)

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])


def _tool(title: str) -> Callable[[F], F]:
    """Register a read-only tool with a title for people (the MCP Inspector and clients list
    it) and its docstring without the source's indentation as its description."""

    def register(fn: F) -> F:
        description = inspect.cleandoc(fn.__doc__ or "")
        return server.tool(title=title, description=description, annotations=_READ_ONLY)(fn)

    return register


async def _read(fn: Callable[[], T]) -> T:
    """Run a database read off the event loop, on a connection the thread keeps healthy."""

    def run() -> T:
        close_old_connections()
        try:
            return fn()
        finally:
            close_old_connections()

    try:
        return await sync_to_async(run, thread_sensitive=False)()
    except DATABASE_ERRORS as exc:
        # Not the caller's fault and not a bug: say so, as the HTTP surfaces' 503 does.
        logger.warning("database unavailable for an MCP tool call: %s", exc)
        if not is_pool_exhausted(exc):
            restart_pool()
        raise ToolError(f"{OUTAGE_MESSAGE} (retry in {retry_after_seconds(exc)} s)") from exc


def _base_url(ctx: Context) -> str:
    # Set on every call over HTTP, the only transport served.
    return ctx.request_context.request.scope[BASE_URL_SCOPE_KEY]  # type: ignore[union-attr]


# Repeated calls within NEWS_RESPONSE_CACHE_SECONDS get this process's earlier answer.
_kept = kept_answer(_base_url)


def _answer(text: str, data: Mapping[str, Any]) -> CallToolResult:
    # The readable markdown first; then, as the protocol asks of a tool with structured
    # content, the same data serialised as JSON for clients that read only text.
    serialised = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return CallToolResult(
        content=[TextContent(type="text", text=text), TextContent(type="text", text=serialised)],
        structured_content=data,
    )


def _entries_answer(
    entries: list[Entry], *, base_url: str, empty: str
) -> tuple[str, list[shapes.EntryItem]]:
    site = settings.NEWS_SITE_NAME
    text = "\n".join(
        documents.entry_markdown(entry, base_url=base_url, site_name=site) for entry in entries
    )
    items = [shapes.entry_item(entry, base_url=base_url, site_name=site) for entry in entries]
    return text or empty, items


@_tool("Latest news")
@_kept
async def latest_news(
    ctx: Context,
    limit: Limit = 10,
    feed_id: Annotated[Id | None, Field(description="Only this source (see list_feeds).")] = None,
    tag_id: Annotated[Id | None, Field(description="Only this tag (see list_tags).")] = None,
) -> Annotated[CallToolResult, shapes.EntryList]:
    """The newest news entries, newest first: title, source, date, Swedish summary, tags and
    links. Optionally only one source (`feed_id`) or one tag (`tag_id`)."""

    def read() -> list[Entry]:
        feed = tag = None
        if feed_id is not None and (feed := selectors.feed_get(feed_id=feed_id)) is None:
            raise ToolError(f"no source with feed_id {feed_id}; list_feeds names them")
        if tag_id is not None and (tag := selectors.tag_get(tag_id=tag_id)) is None:
            raise ToolError(f"no tag with tag_id {tag_id}; list_tags names them")
        return list(selectors.entry_list(feed=feed, tag=tag)[:limit])

    text, items = _entries_answer(await _read(read), base_url=_base_url(ctx), empty="No entries.")
    return _answer(text, {"entries": items})


@_tool("Most read news")
@_kept
async def popular_news(
    ctx: Context, limit: Limit = 10
) -> Annotated[CallToolResult, shapes.EntryList]:
    """The most read news entries (by article views), most read first."""
    entries = await _read(lambda: list(selectors.entry_popular()[:limit]))
    text, items = _entries_answer(entries, base_url=_base_url(ctx), empty="No entries.")
    return _answer(text, {"entries": items})


@_tool("Search news")
@_kept
async def search_news(
    ctx: Context,
    query: Annotated[
        str, Field(min_length=1, max_length=200, description="What to look for."), NoNul
    ],
    limit: Limit = 20,
) -> Annotated[CallToolResult, shapes.SearchResult]:
    """Search the news entries by meaning (semantic search over titles and summaries, in any
    language), with keyword search as the fallback, as in the API. `mode` in the answer says
    which one answered: `semantic` or `keyword`."""
    if not query.strip():
        raise ToolError("query must contain a word")
    entries, mode = await _read(lambda: entries_search(query=query, limit=limit))
    text, items = _entries_answer(entries, base_url=_base_url(ctx), empty="No matches.")
    return _answer(text, {"query": query, "mode": mode, "entries": items})


@_tool("News entry")
@_kept
async def get_entry(ctx: Context, entry_id: Id) -> Annotated[CallToolResult, shapes.EntryItem]:
    """One news entry by id: metadata, Swedish summary, tags, source credit and links."""
    entry = await _read(lambda: selectors.entry_get(entry_id=entry_id))
    if entry is None:
        raise ToolError(f"no entry with entry_id {entry_id}")
    base_url, site = _base_url(ctx), settings.NEWS_SITE_NAME
    return _answer(
        documents.entry_markdown(entry, base_url=base_url, site_name=site),
        shapes.entry_item(entry, base_url=base_url, site_name=site),
    )


@_tool("News sources")
@_kept
async def list_feeds() -> Annotated[CallToolResult, shapes.FeedList]:
    """The news sources the service follows, by name (`id` is latest_news' `feed_id`)."""
    feeds = await _read(lambda: list(selectors.feed_list().only("id", "title")))
    text = "\n".join(f"- {markdown_text(feed.title)} (feed_id {feed.pk})" for feed in feeds)
    return _answer(text or "No sources.", {"feeds": [shapes.feed_item(feed) for feed in feeds]})


@_tool("Tags")
@_kept
async def list_tags() -> Annotated[CallToolResult, shapes.TagList]:
    """The tags entries carry, by name (`id` is latest_news' `tag_id`)."""
    tags = await _read(lambda: list(selectors.tag_list().only("id", "name")))
    text = "\n".join(f"- {markdown_text(tag.name)} (tag_id {tag.pk})" for tag in tags)
    return _answer(text or "No tags.", {"tags": [shapes.tag_item(tag) for tag in tags]})


@_tool("Running stories")
@_kept
async def latest_stories(limit: Limit = 10) -> Annotated[CallToolResult, shapes.StoryList]:
    """Running stories (one event covered by several sources), most recently updated first;
    get_story gives one with its entries."""
    stories = await _read(lambda: list(story_selectors.story_list()[:limit]))
    text = "\n".join(
        f"- {markdown_text(story.title)} (story_id {story.pk}, "
        f"{story.updated_at.date().isoformat()})"
        + (f": {markdown_text(story.lead)}" if story.lead else "")
        for story in stories
    )
    return _answer(
        text or "No stories.", {"stories": [shapes.story_item(story) for story in stories]}
    )


@_tool("Story")
@_kept
async def get_story(ctx: Context, story_id: Id) -> Annotated[CallToolResult, shapes.StoryDetail]:
    """One running story by id: its lead and text, and its entries with credits and links."""

    def read() -> tuple[Story, list[Entry]]:
        story = story_selectors.story_get(story_id=story_id)
        if story is None:
            raise ToolError(f"no story with story_id {story_id}")
        return story, list(story_selectors.story_entries(story=story))

    story, entries = await _read(read)
    base_url, site = _base_url(ctx), settings.NEWS_SITE_NAME
    return _answer(
        documents.story_markdown(story, entries, base_url=base_url, site_name=site),
        shapes.story_detail(story, entries, base_url=base_url, site_name=site),
    )


@_tool("Podcast episodes")
@_kept
async def list_podd_episodes(limit: Limit = 10) -> Annotated[CallToolResult, shapes.EpisodeList]:
    """The service's own podcast episodes, newest first (get_podd_episode has the notes)."""
    episodes = await _read(lambda: list(podcast_selectors.episode_list()[:limit]))
    text = "\n".join(
        f"- {markdown_text(episode.title)} (episode_id {markdown_text(episode.episode_id)}"
        + (f", {episode.published_on.isoformat()})" if episode.published_on else ")")
        for episode in episodes
    )
    return _answer(
        text or "No episodes.",
        {"episodes": [shapes.episode_item(episode) for episode in episodes]},
    )


@_tool("Podcast episode")
@_kept
async def get_podd_episode(
    episode_id: Annotated[str, Field(min_length=1, max_length=200), NoNul],
) -> Annotated[CallToolResult, shapes.EpisodeDetail]:
    """One podcast episode by `episode_id`: show notes, chapters, sources and links. The
    episode's feed GUID (the id older answers gave) is accepted too."""
    episode = await _read(
        lambda: (
            podcast_selectors.episode_get(episode_id=episode_id)
            or podcast_selectors.episode_get_by_guid(guid=episode_id)
        )
    )
    if episode is None:
        raise ToolError(f"no episode with episode_id {episode_id!r}")
    return _answer(documents.episode_markdown(episode), shapes.episode_detail(episode))


@_tool("Product guides")
@_kept
async def list_product_guides(
    ctx: Context, page_type: PageType | None = None
) -> Annotated[CallToolResult, shapes.GuideList]:
    """The published product guides. Optional `page_type`: `product_hub`, `family_hub`,
    `generation_hub` or `rumor`. get_product_guide gives one as markdown."""
    guides = await _read(lambda: list(selectors.guide_list(page_type=page_type)))
    base_url = _base_url(ctx)
    text = "\n".join(
        f"- {markdown_link(guide.title, f'{base_url}/{guide.slug}.md')} "
        f"(slug {markdown_text(guide.slug)}, {guide.page_type})"
        for guide in guides
    )
    return _answer(
        text or "No guides.",
        {"guides": [shapes.guide_item(guide, base_url=base_url) for guide in guides]},
    )


@_tool("Product guide")
@_kept
async def get_product_guide(
    ctx: Context, slug: Annotated[str, Field(min_length=1, max_length=100), NoNul]
) -> Annotated[CallToolResult, shapes.GuideDetail]:
    """One product guide by `slug` (see list_product_guides), as markdown."""
    guide = await _read(lambda: selectors.guide_get(slug=slug))
    if guide is None:
        raise ToolError(f"no guide with slug {slug!r}")
    base_url = _base_url(ctx)
    markdown = documents.guide_markdown(guide, base_url=base_url)
    return _answer(markdown, {**shapes.guide_item(guide, base_url=base_url), "markdown": markdown})
