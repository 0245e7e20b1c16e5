"""Every read operation of the news service's OpenAPI document, asked with the ids its own lists
hold, each answer validated strictly against the document the service serves
(tests/support/openapi_strict.py): a walk over whatever data the test loaded (the demo, hostile
feeds).
"""

import json
from typing import Any
from urllib.parse import urlencode

from django.http import HttpResponse
from django.test import Client

from tests.support.openapi_strict import validate

BASE = "http://testserver"


class StrictWalk:
    def __init__(self, client: Client, headers: dict[str, str] | None = None) -> None:
        self.client = client
        self.headers = headers or {}
        schema = client.get("/api/v1/schema", {"format": "json"})
        assert schema.status_code == 200
        self.document: dict[str, Any] = schema.json()
        # operation path template -> answers validated
        self.validated: dict[tuple[str, str], int] = {}

    def get(self, template: str, path: str, **query: str) -> Any:
        """GET `path` (an instance of the document's `template`), validated; its JSON."""
        return self.call("get", template, path, **query).json()

    def call(
        self,
        method: str,
        template: str,
        path: str,
        body: Any = None,
        headers: dict[str, str] | None = None,
        **query: str,
    ) -> HttpResponse:
        """`method path` with a JSON `body`, its answer validated against `template`'s
        operation; the answer."""
        url = path + (f"?{urlencode(query)}" if query else "")
        response = self.client.generic(
            method.upper(),
            url,
            data=b"" if body is None else json.dumps(body).encode(),
            content_type="application/json",
            headers={**self.headers, **(headers or {})},
        )
        validate(
            self.document,
            method=method,
            url=BASE + url,
            status=response.status_code,
            headers=dict(response.headers),
            body=response.content,
            operation_path=template,
        )
        key = (method, template)
        self.validated[key] = self.validated.get(key, 0) + 1
        return response

    def every_read(self) -> None:
        """Lists in both languages and sorts, then every item they name and its sub-lists."""
        self.get("/api/v1/", "/api/v1/")
        for lang in ("sv", "en"):
            for template in ("/api/v1/entries", "/api/v1/entries/popular"):
                self.get(template, template, lang=lang, per_page="100")
        self.get("/api/v1/entries", "/api/v1/entries", sort="popular")
        self.get("/api/v1/entries/search", "/api/v1/entries/search", q="iPhone")
        entries = self.get("/api/v1/entries", "/api/v1/entries", per_page="100")["data"]
        for entry in entries:
            self.get("/api/v1/entries/{entry_id}", f"/api/v1/entries/{entry['id']}", lang="en")
            self.get("/entries/{id}.json", f"/entries/{entry['id']}.json")
        for feed in self.get("/api/v1/feeds", "/api/v1/feeds", per_page="100")["data"]:
            self.get("/api/v1/feeds/{feed_id}", f"/api/v1/feeds/{feed['id']}")
            self.get("/api/v1/feeds/{feed_id}/entries", f"/api/v1/feeds/{feed['id']}/entries")
            self.get("/feeds/{id}.json", f"/feeds/{feed['id']}.json")
        self.get("/feeds.json", "/feeds.json")
        for tag in self.get("/api/v1/tags", "/api/v1/tags", per_page="100")["data"]:
            self.get("/api/v1/tags/{slug}", f"/api/v1/tags/{tag['slug']}")
            self.get("/api/v1/tags/{slug}/entries", f"/api/v1/tags/{tag['slug']}/entries")
        for status in ("active", "dormant"):
            for story in self.get("/api/v1/stories", "/api/v1/stories", status=status)["data"]:
                self.get("/api/v1/stories/{story_id}", f"/api/v1/stories/{story['id']}")
        episodes = self.get("/api/v1/podd_episodes", "/api/v1/podd_episodes", per_page="100")
        for episode in episodes["data"]:
            path = f"/api/v1/podd_episodes/{episode['episode_id']}"
            self.get("/api/v1/podd_episodes/{episode_id}", path)
            self.get("/api/v1/podd_episodes/{episode_id}", path, include_transcript="true")
        for template in ("/entries.json", "/entries/popular.json"):
            self.get(template, template)
        for tag in self.get("/tags.json", "/tags.json")["tags"]:
            self.get("/tags/{id}.json", f"/tags/{tag['id']}.json")

    def operations(self) -> set[tuple[str, str]]:
        """(method, path template) of every operation the document describes."""
        return {
            (method, path)
            for path, operations in self.document["paths"].items()
            for method in operations
            if method in ("get", "post", "put", "patch", "delete")
        }
