"""The per-process bound on concurrent requests (shared/concurrency.py): past the bound a request
gets 503 with Retry-After at once, in its surface's shape; a slot is free again as soon as a
request ends, whether it succeeded or failed; liveness and metrics are never refused."""

import asyncio
import time

import httpx
import pytest
from starlette.types import Receive, Scope, Send

from shared.concurrency import ConcurrencyLimit, Refusal

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class HeldApp:
    """An application whose requests wait until released; /boom fails."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.started = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.started += 1
        if scope["path"] == "/boom":
            raise RuntimeError("a failing view")
        if scope["path"] not in ("/healthz", "/quick"):
            await self.release.wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


def client(app: ConcurrencyLimit) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app, raise_app_exceptions=False),
        base_url="http://testserver",
    )


async def until(condition, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not reached"
        await asyncio.sleep(0.01)


async def test_requests_past_the_bound_are_refused_at_once_in_their_surface_shape():
    inner = HeldApp()
    v1 = Refusal("/api/v1/", b"application/json", b'{"error": "busy"}')
    app = ConcurrencyLimit(inner, limit=2, refusals=[v1])
    async with client(app) as http:
        held = [asyncio.create_task(http.get(f"/slow/{n}")) for n in range(2)]
        await until(lambda: app.active == 2)

        started = time.monotonic()
        plain = await http.get("/entries.json")
        api = await http.get("/api/v1/entries")
        elapsed = time.monotonic() - started
        # Liveness and metrics are answered while the process is full.
        health = await http.get("/healthz")

        assert plain.status_code == 503
        assert plain.headers["retry-after"] == "1"
        assert plain.headers["cache-control"] == "no-store"
        assert plain.headers["content-type"].startswith("text/plain")
        assert "busy" in plain.text
        assert api.status_code == 503
        assert api.headers["content-type"] == "application/json"
        assert api.json() == {"error": "busy"}
        assert health.status_code == 200
        # Refused without reaching the application, and without waiting for a slot.
        assert inner.started == 3
        # A request that waited for a slot would wait until the held ones are released (never,
        # here); the bound is slack for a loaded machine.
        assert elapsed < 10

        inner.release.set()
        assert [(await task).status_code for task in held] == [200, 200]
        assert app.active == 0
        # The burst is over: the next request is served.
        assert (await http.get("/quick")).status_code == 200


async def test_a_failing_request_gives_its_slot_back():
    app = ConcurrencyLimit(HeldApp(), limit=1)
    async with client(app) as http:
        for _ in range(3):
            assert (await http.get("/boom")).status_code == 500
        assert app.active == 0
        assert (await http.get("/quick")).status_code == 200


async def test_a_bound_of_zero_turns_the_limit_off():
    inner = HeldApp()
    app = ConcurrencyLimit(inner, limit=0)
    async with client(app) as http:
        held = [asyncio.create_task(http.get(f"/slow/{n}")) for n in range(5)]
        await until(lambda: inner.started == 5)
        inner.release.set()
        assert {(await task).status_code for task in held} == {200}
