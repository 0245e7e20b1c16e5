"""GET /api/v1/: what the API offers, as links, in the API's own format (JSON), for a person or
a client that starts at the prefix instead of a 404."""

from django.conf import settings
from rest_framework.request import Request
from rest_framework.response import Response

from news_site.api import openapi
from news_site.api.base import ApiView
from news_site.api.envelopes import item_response

# (name, path, what it is): the reference first, then the collections, then the other surfaces.
LINKS = (
    ("docs", "/api/v1/docs", "The API reference (Swagger UI)."),
    ("schema", "/api/v1/schema", "The OpenAPI document (YAML; ?format=json for JSON)."),
    ("entries", "/api/v1/entries", "Relevant entries, newest first."),
    ("search", "/api/v1/entries/search?q=iPhone", "Search entries."),
    ("stories", "/api/v1/stories", "Stories: one event told by several sources."),
    ("feeds", "/api/v1/feeds", "Sources."),
    ("tags", "/api/v1/tags", "Tags."),
    ("podd_episodes", "/api/v1/podd_episodes", "Podcast episodes."),
    ("login", "/api/v1/auth/login", "Sign in (POST) for follows."),
    ("mcp", "/mcp", "The same reads for AI agents (MCP, Streamable HTTP)."),
    ("llms_txt", "/llms.txt", "A map of the service for language models, linking markdown."),
    ("rss", "/entries.rss", "The latest entries as RSS."),
)


class IndexView(ApiView):
    @openapi.INDEX_GET
    def get(self, request: Request) -> Response:
        links = [
            {"rel": rel, "href": request.build_absolute_uri(path), "title": title}
            for rel, path, title in LINKS
        ]
        return item_response({"name": settings.NEWS_SITE_NAME, "api_version": "v1", "links": links})


index_view = IndexView.as_view()
