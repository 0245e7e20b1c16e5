"""The product guides as MCP resources: `resources/list` names every published guide
(`news://guides/<slug>`, markdown), `resources/read` gives one as the same markdown as
`/<slug>.md` and the get_product_guide tool. The guides are the service's lasting documents, the
reading an agent may want to attach whole; the news itself changes too fast to list as
resources and stays with the tools."""

import re
from collections.abc import Awaitable, Callable
from typing import TypeVar

from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver.exceptions import ResourceNotFoundError
from mcp_types import Resource

from news_site.agents import documents
from news_site.news import selectors
from news_site.news.models import ProductGuide

T = TypeVar("T")
Read = Callable[[Callable[[], T]], Awaitable[T]]

SCHEME = "news://guides/"
MARKDOWN = "text/markdown"
# The guide slug's own rule (news.converters.GuideSlugConverter).
_GUIDE_URI = re.compile(r"news://guides/([a-z0-9]+(?:-[a-z0-9]+)*)")


def guide_uri(guide: ProductGuide) -> str:
    return f"{SCHEME}{guide.slug}"


async def guide_resources(read: Read) -> list[Resource]:
    guides = await read(lambda: list(selectors.guide_list()))
    return [
        Resource(
            uri=guide_uri(guide),
            name=guide.slug,
            title=guide.title,
            description=guide.description or f"Product guide ({guide.page_type}).",
            mime_type=MARKDOWN,
        )
        for guide in guides
    ]


async def guide_read(uri: str, *, read: Read, base_url: str) -> list[ReadResourceContents]:
    match = _GUIDE_URI.fullmatch(uri)
    guide = await read(lambda: selectors.guide_get(slug=match[1])) if match else None
    if guide is None:
        raise ResourceNotFoundError(f"no resource {uri[:200]!r}: list_resources names the guides")
    markdown = documents.guide_markdown(guide, base_url=base_url)
    return [ReadResourceContents(content=markdown, mime_type=MARKDOWN)]
