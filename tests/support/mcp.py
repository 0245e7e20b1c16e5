"""A real uvicorn serving the news service's ASGI app (Django plus /mcp) on a free port, in a
thread of the test process so that it shares the test database and cache, and the SDK's own
Streamable HTTP client to talk to it. A plugin of every suite (`pytest_plugins` in
tests/conftest.py): `mcp_server`. The news service's modules are imported where they are used,
because the compliance suite loads this plugin too, under settings without the news apps."""

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import TypeVar

import pytest
import uvicorn
from django.core.asgi import get_asgi_application
from django.db import connection
from mcp import Client
from mcp_types import CallToolResult

from tests.conftest import free_port

T = TypeVar("T")


class McpServer:
    def __init__(self) -> None:
        from news_site.mcp.asgi import MCP_PATH, mcp_application
        from news_site.router import PathRouter

        port = free_port()
        self.base_url = f"http://127.0.0.1:{port}"
        self.url = f"{self.base_url}/mcp"
        config = uvicorn.Config(
            PathRouter(mcp=mcp_application(), mcp_path=MCP_PATH, other=get_asgi_application()),
            host="127.0.0.1",
            port=port,
            lifespan="on",
            log_level="warning",
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def start(self) -> None:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)

    def session(self, work: Callable[[Client], Awaitable[T]]) -> T:
        """Run `work` with an initialised SDK client (tests stay synchronous for the ORM)."""

        async def run() -> T:
            async with Client(self.url) as client:
                return await work(client)

        return asyncio.run(run())

    def call(self, name: str, arguments: dict | None = None) -> CallToolResult:
        return self.session(lambda client: client.call_tool(name, arguments or {}))


@pytest.fixture(scope="module")
def _mcp_uvicorn(django_db_setup) -> Iterator[McpServer]:
    """One server for the module (a start and a stop per test cost more than most tests): it
    reads the settings and the database at each request, as the tests change them."""
    server = McpServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def mcp_server(_mcp_uvicorn, transactional_db, settings, monkeypatch) -> McpServer:
    # Most tests make more calls than the production limit; the rate-limit tests set their own.
    settings.MCP_RATE_LIMIT = "100000/m"
    settings.MCP_PROTOCOL_RATE_LIMIT = "100000/m"
    # Tests change the data between calls; test_answer_cache.py turns answers on.
    settings.NEWS_RESPONSE_CACHE_SECONDS = 0
    from news_site.mcp.answers import ANSWERS

    ANSWERS.clear()
    # The server's worker threads close their connections after each read, so none is left
    # open on the test database when the test's data is flushed or the run tears it down.
    monkeypatch.setitem(connection.settings_dict, "CONN_MAX_AGE", 0)
    return _mcp_uvicorn
