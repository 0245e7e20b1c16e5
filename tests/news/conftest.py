"""Fixtures of the news tests: loopback HTTP servers standing in for sources and the model,
and the factories (tests/support/news_factories.py) as fixtures; the pipeline itself is
exercised in tests/news/news."""

import json
from collections.abc import Callable
from datetime import datetime
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler

import pytest
from django.test import Client

from news_site.accounts.models import Account
from news_site.news.models import Entry, Feed, Tag
from tests.support.localserver import LocalServer
from tests.support.news_factories import EntryFactory, FeedFactory, TagFactory, account_with_token
from tests.support.shared_factories import UserFactory


@pytest.fixture
def editor_client(db) -> Client:
    """Django's test client signed in as an editor (staff with every permission)."""
    user = UserFactory(username="redaktor", superuser=True)
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def server(local_server: LocalServer) -> LocalServer:
    return local_server


@pytest.fixture
def private_fetching(settings):
    """The sources of these tests live on 127.0.0.1, which production refuses."""
    settings.FETCH_ALLOW_PRIVATE_NETWORKS = True
    settings.NEWS_FETCH_TIMEOUT_SECONDS = 2
    return settings


class FakeModel:
    """An OpenAI-compatible chat-completions endpoint on a LocalServer. Each test queues the
    answers (status, body); without queued answers it summarises politely in Swedish."""

    def __init__(self, server: LocalServer) -> None:
        self.server = server
        self.answers: list[tuple[int, dict | str, dict[str, str]]] = []
        server.route("/v1/chat/completions", self._answer)

    @property
    def requests(self) -> list[dict]:
        return [
            json.loads(body) for _m, _p, _h, body in self.server.requests_to("/v1/chat/completions")
        ]

    def queue(self, status: int, body: dict | str, headers: dict[str, str] | None = None) -> None:
        self.answers.append((status, body, headers or {}))

    @staticmethod
    def completion(content: dict | str) -> dict:
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        return {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
        }

    def _answer(self, request: BaseHTTPRequestHandler) -> None:
        if self.answers:
            status, body, headers = self.answers.pop(0)
        else:
            prompt = json.loads(self.server.seen[-1][3])["messages"][1]["content"]
            title = next(line for line in prompt.splitlines() if line.startswith("Rubrik: "))
            status, headers = 200, {}
            body = self.completion(
                {
                    "summary_sv": f"Sammanfattning på svenska av {title[8:]}.",
                    "summary_original": f"Short summary of {title[8:]}.",
                    "tags": ["iPhone", "Test"],
                    "platform_relevant": True,
                }
            )
        raw = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        request.send_response(status)
        for name, value in headers.items():
            request.send_header(name, value)
        request.send_header("Content-Type", "application/json")
        request.send_header("Content-Length", str(len(raw)))
        request.end_headers()
        request.wfile.write(raw)


@pytest.fixture
def fake_model(server, settings) -> FakeModel:
    settings.NEWS_LLM_BASE_URL = server.url("/v1")
    settings.NEWS_LLM_MODEL = "test-model"
    settings.NEWS_LLM_API_KEY = "test-key"
    settings.NEWS_LLM_RETRY_BASE_SECONDS = 0.01
    settings.NEWS_LLM_TIMEOUT_SECONDS = 5
    return FakeModel(server)


def _rss(
    items: list[dict], *, title: str = "Källan", ttl: int | None = None, extra: str = ""
) -> bytes:
    """A small RSS 2.0 document; each item dict has guid, link, title, description, pubDate."""
    parts = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/">',
        f"<channel><title>{title}</title><link>https://source.example/</link>",
        f"<ttl>{ttl}</ttl>" if ttl else "",
        extra,
    ]
    for item in items:
        parts.append("<item>")
        for key, value in item.items():
            if key == "media":
                parts.append(f'<media:content url="{value}" medium="image" type="image/jpeg"/>')
            elif key == "guid":
                parts.append(f'<guid isPermaLink="false">{value}</guid>')
            else:
                parts.append(f"<{key}>{value}</{key}>")
        parts.append("</item>")
    parts.append("</channel></rss>")
    return "\n".join(parts).encode()


@pytest.fixture
def make_feed() -> Callable[..., Feed]:
    return FeedFactory


@pytest.fixture
def make_entry() -> Callable[..., Entry]:
    """`make_entry(feed, tags=[...], **fields)`: an entry of `feed`."""
    return lambda feed, **values: EntryFactory(feed=feed, **values)


@pytest.fixture
def make_tag() -> Callable[[str], Tag]:
    return lambda name: TagFactory(name=name)


@pytest.fixture
def make_account() -> Callable[[str], tuple[Account, dict[str, str]]]:
    """An email account and the Authorization header of a fresh Bearer token for it."""
    return account_with_token


@pytest.fixture
def rss() -> Callable[..., bytes]:
    return _rss


@pytest.fixture
def http_date() -> Callable[[datetime], str]:
    return format_datetime
