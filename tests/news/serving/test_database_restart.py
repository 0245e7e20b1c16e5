"""The news service while its PostgreSQL is stopped or restarted (a private cluster, so the
test may take it down): clear 503s with Retry-After, never a 500 or a hang, and every request
succeeds again once the database is back, without restarting gunicorn, with nothing lost."""

from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest
from django.conf import settings as django_settings

from tests.conftest import Gunicorn
from tests.private_services import PgCluster, manage, postgres_pass_only, restart_under_load

# Requests must come back well within this, outage or not.
CLIENT_TIMEOUT = 10


@dataclass
class Served:
    cluster: PgCluster
    server: Gunicorn
    token: dict[str, str]
    feed_id: int


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    postgres_pass_only(django_settings.DATABASES["default"])
    cluster = PgCluster()
    server = None
    try:
        cluster.start()
        env = {
            "NEWS_DATABASE_URL": cluster.create_database("news"),
            "SECRET_KEY": "test-secret",
            "SECURE_SSL_REDIRECT": "false",
            "NEWS_EMBEDDING_MODEL": "off",
            # Every read reaches Django and the database (no per-process copies).
            "NEWS_RESPONSE_CACHE_SECONDS": "0",
        }
        manage("news_site", "migrate", "--noinput", "-v", "0", env=env)
        manage("news_site", "load_demo", env=env)
        raw = manage("news_site", "create_token", "anna@example.se", env=env).strip().splitlines()
        server = Gunicorn(
            "news_site.asgi:application",
            env,
            workers=2,
            worker_class="uvicorn_worker.UvicornWorker",
        )
        server.wait_ready("/healthz")
        token = {"Authorization": f"Bearer {raw[-1]}"}
        feeds = httpx.get(f"{server.url}/api/v1/feeds", timeout=CLIENT_TIMEOUT).json()["data"]
        yield Served(cluster, server, token, feeds[0]["id"])
    finally:
        if server is not None:
            server.stop()
        cluster.destroy()


def surfaces(served: Served) -> list[tuple[str, dict[str, str]]]:
    return [
        ("/api/v1/entries", {}),
        ("/api/v1/entries/follows", served.token),
        ("/entries.json", {}),
        ("/index.md", {}),
        ("/entries.rss", {}),
    ]


def get(served: Served, path: str, headers: dict[str, str]) -> httpx.Response:
    return httpx.get(served.server.url + path, headers=headers, timeout=CLIENT_TIMEOUT)


def latest_news_call(served: Served) -> httpx.Response:
    return httpx.post(
        f"{served.server.url}/mcp",
        json={
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "latest_news", "arguments": {}},
        },
        headers={"Accept": "application/json, text/event-stream"},
        timeout=CLIENT_TIMEOUT,
    )


def test_a_stopped_database_answers_503_everywhere_and_recovers(served):
    follow = httpx.post(
        f"{served.server.url}/api/v1/feeds/{served.feed_id}/follow",
        headers=served.token,
        timeout=CLIENT_TIMEOUT,
    )
    assert follow.status_code == 200
    before = {path: get(served, path, headers) for path, headers in surfaces(served)}
    assert {path: r.status_code for path, r in before.items()} == dict.fromkeys(before, 200)
    assert before["/api/v1/entries/follows"].json()["data"]

    served.cluster.stop()
    try:
        down = {path: get(served, path, headers) for path, headers in surfaces(served)}
        ready = get(served, "/readyz", {})
        live = get(served, "/healthz", {})
        tool = latest_news_call(served)
    finally:
        served.cluster.start()
    after = {path: get(served, path, headers) for path, headers in surfaces(served)}

    for path, response in down.items():
        assert response.status_code == 503, path
        assert response.headers["Retry-After"] == "5", path
        assert response.elapsed.total_seconds() < CLIENT_TIMEOUT / 2, path
    for path in ("/api/v1/entries", "/api/v1/entries/follows"):
        assert down[path].json() == {
            "error": {
                "type": "service_unavailable",
                "message": down[path].json()["error"]["message"],
            },
            "meta": {"api_version": "v1"},
        }
    for path in ("/entries.json", "/index.md", "/entries.rss"):
        assert down[path].headers["Content-Type"].startswith("text/plain"), path
        assert "temporarily unavailable" in down[path].text
    assert ready.status_code == 503
    assert ready.json()["checks"]["database"]["ok"] is False
    assert live.status_code == 200
    # The tool server answers a tool error that says what is going on, not a protocol error.
    assert tool.status_code == 200
    assert tool.json()["result"]["isError"] is True
    assert "temporarily unavailable" in tool.json()["result"]["content"][0]["text"]
    assert latest_news_call(served).json()["result"]["isError"] is False
    # Back without a restart of gunicorn, with the same data (the follow written before).
    assert {path: r.status_code for path, r in after.items()} == dict.fromkeys(after, 200)
    for path in ("/api/v1/entries", "/api/v1/entries/follows"):
        assert after[path].json() == before[path].json(), path


def test_a_restart_under_load_gives_503s_only_while_it_lasts(served):
    load = restart_under_load(
        served.cluster, served.server.url, surfaces(served), timeout=CLIENT_TIMEOUT
    )

    print(load.report())
    statuses = {a.status for a in load.answers}
    assert statuses <= {200, 503}, sorted(statuses)
    assert max(a.seconds for a in load.answers) < CLIENT_TIMEOUT / 2
    # Once the database is back every request succeeds, in every gunicorn worker.
    settled = load.settled()
    assert len(settled) > 20
    assert {a.status for a in settled} == {200}
