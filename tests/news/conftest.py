"""Fixtures of the news tests: loopback HTTP servers standing in for sources and the model,
and a few ways to make rows (plain ORM; the pipeline itself is exercised in tests/news/news)."""

import itertools
import json
from collections.abc import Callable
from datetime import datetime, timedelta
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone
from django.utils.text import slugify

from news_site.news.models import Entry, Feed, SummaryState, Tag
from news_site.news.text import canonical_url, sha256
from tests.localserver import LocalServer


@pytest.fixture
def editor_client(db) -> Client:
    """Django's test client signed in as an editor (staff with every permission)."""
    user = get_user_model().objects.create_user(
        "redaktor", password="x-long-password", is_staff=True, is_superuser=True
    )
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


_sequence = itertools.count(1)


def _make_feed(**values) -> Feed:
    n = next(_sequence)
    defaults = {"title": f"Källa {n}", "url": f"https://source{n}.example/feed.xml"}
    return Feed.objects.create(**{**defaults, **values})


def _make_entry(feed: Feed, *, tags: list[Tag] = (), **values) -> Entry:
    n = next(_sequence)
    url = values.pop("url", f"https://{feed.pk}.example/articles/{n}")
    published = values.pop("published_at", timezone.now() - timedelta(hours=n % 48))
    defaults = {
        "feed": feed,
        "guid": url,
        "guid_hash": sha256(f"{feed.pk}\n{url}"),
        "url": url,
        "canonical_url": canonical_url(url),
        "canonical_url_hash": sha256(canonical_url(url)),
        "title": f"Apple släpper nyhet {n}",
        "language": "sv",
        "published_at": published,
        "listed_at": published or timezone.now(),
        "content_fingerprint": sha256(url),
        "summary_original": f"Sammanfattning {n}.",
        "summary_translated": f"Sammanfattning {n}.",
        "summary_state": SummaryState.TRANSLATED,
        "platform_relevant": True,
    }
    entry = Entry.objects.create(**{**defaults, **values})
    entry.tags.set(tags)
    return entry


def _make_tag(name: str) -> Tag:
    return Tag.objects.create(name=name, slug=slugify(name))


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
    return _make_feed


@pytest.fixture
def make_entry() -> Callable[..., Entry]:
    return _make_entry


@pytest.fixture
def make_tag() -> Callable[[str], Tag]:
    return _make_tag


@pytest.fixture
def rss() -> Callable[..., bytes]:
    return _rss


@pytest.fixture
def http_date() -> Callable[[datetime], str]:
    return format_datetime
