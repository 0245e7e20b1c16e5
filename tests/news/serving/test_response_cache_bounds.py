"""The per-process response cache is correct and bounded: its key holds scheme, host (with port)
and the representation negotiated from every line of a varied header; its memory stays under
its byte cap however many distinct pages are asked for, dropping the least recently used."""

from collections.abc import Iterator

import anyio
import httpx
import pytest
from starlette.types import Receive, Scope, Send

from news_site.responsecache import PublicResponseCache
from tests.conftest import Gunicorn, news_served

BODY_BYTES = 10_000


class Pages:
    """Each path is a public page of BODY_BYTES; counts what reached it."""

    def __init__(self) -> None:
        self.calls = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.calls += 1
        headers = [(b"cache-control", b"public, max-age=60"), (b"content-type", b"text/plain")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"x" * BODY_BYTES})


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_memory_stays_under_the_byte_cap_and_the_least_recently_used_go_first():
    pages = Pages()
    cache = PublicResponseCache(pages, seconds=60, max_bytes=100_000)
    transport = httpx.ASGITransport(app=cache)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        await http.get("/kept")
        for n in range(2000):
            # A path no surface declares (news_site/cache_keys.py), so keyed on its raw query.
            await http.get(f"/list.json?page={n}")
            if n % 3 == 0:
                # Used all along: never the least recently used.
                assert "age" in (await http.get("/kept")).headers
            assert cache.size_bytes <= cache.max_bytes
        assert len(cache.entries) <= 100_000 // BODY_BYTES
        assert len(cache.vary) <= 2001
        calls = pages.calls
        assert "age" in (await http.get("/kept")).headers
        # The first pages were dropped long ago: asking again reaches the application.
        assert "age" not in (await http.get("/list.json?page=0")).headers
        assert pages.calls == calls + 1


@pytest.mark.anyio
async def test_a_body_larger_than_the_cap_is_passed_on_and_not_kept():
    cache = PublicResponseCache(Pages(), seconds=60, max_bytes=BODY_BYTES // 2)
    transport = httpx.ASGITransport(app=cache)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        for _ in range(2):
            response = await http.get("/big")
            assert len(response.content) == BODY_BYTES
            assert "age" not in response.headers
    assert cache.size_bytes == 0


@pytest.fixture(scope="module")
def server(django_db_setup) -> Iterator[Gunicorn]:
    """One server for the module (starting one takes seconds): its tests ask for different
    pages (/llms.txt, their own entry's), so no copy one keeps answers the other."""
    with news_served({"NEWS_RESPONSE_CACHE_SECONDS": "30"}) as server:
        yield server


@pytest.fixture
def served(server, transactional_db, make_feed, make_entry):
    feed = make_feed()
    return server, make_entry(feed, title="Första nyheten")


@pytest.mark.django_db(transaction=True)
def test_a_page_asked_for_on_another_host_or_port_is_not_served_to_this_one(served):
    server, _entry = served
    port = server.url.rsplit(":", 1)[1]
    poisoned = httpx.get(f"{server.url}/llms.txt", headers={"Host": "localhost:6666"})
    assert poisoned.status_code == 200
    assert "http://localhost:6666/" in poisoned.text

    for _ in range(2):
        own = httpx.get(f"{server.url}/llms.txt")
        assert "6666" not in own.text
        assert f"http://127.0.0.1:{port}/" in own.text
    # ...and the second of those was a copy: the key is per host, not uncached.
    assert "age" in own.headers


@pytest.mark.django_db(transaction=True)
def test_accept_sent_as_two_lines_is_its_own_key(served):
    server, entry = served
    url = f"{server.url}/entries/{entry.pk}"
    two_lines = [("Accept", "text/html"), ("Accept", "text/markdown")]
    for _ in range(2):
        both = httpx.get(url, headers=two_lines)
        assert both.status_code == 200
    assert "age" in both.headers

    markdown = httpx.get(url, headers={"Accept": "text/markdown"})
    html = httpx.get(url, headers={"Accept": "text/html"})
    assert markdown.headers["content-type"].startswith("text/markdown")
    assert html.headers["content-type"].startswith("text/html")
    # The two lines negotiate as one header `text/html,text/markdown` (as Django joins them):
    # asked that way in one line, the same copy answers.
    joined = httpx.get(url, headers={"Accept": "text/html, text/markdown"})
    assert "age" in joined.headers
    assert joined.headers["content-type"] == both.headers["content-type"]
    assert joined.content == both.content


def _held_bytes(cache: PublicResponseCache) -> int:
    """What the cache holds, counted from its contents (not from its own counters): bodies,
    headers and keys of the kept pages, and the keys of both indexes."""

    def key_bytes(key: tuple) -> int:
        return sum(len(part) for part in key)

    kept = sum(
        len(entry.body) + sum(len(n) + len(v) for n, v in entry.headers) + key_bytes(key)
        for key, entry in cache.entries.items()
    )
    return kept + sum(map(key_bytes, cache.vary)) + sum(map(key_bytes, cache.not_kept))


class PrivatePages:
    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = [(b"cache-control", b"private, max-age=60")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"mine"})


@pytest.mark.anyio
@pytest.mark.parametrize("app", [Pages, PrivatePages], ids=["kept", "not-kept"])
async def test_keys_count_against_the_byte_budget_however_long_the_query(app):
    """A crawler's long query strings: 64 KB ones are served but never kept, and keys of up to
    4 KB are counted with the bodies, so what the cache holds stays within its budget."""
    budget = 200_000
    cache = PublicResponseCache(app(), seconds=60, max_bytes=budget)
    transport = httpx.ASGITransport(app=cache)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        for n in range(300):
            # A path no surface declares (news_site/cache_keys.py), so keyed on its raw query.
            huge = await http.get(f"/list.json?junk={n}{'y' * 65_000}")
            assert huge.status_code == 200
            long = await http.get(f"/list.json?junk={n}{'z' * 4000}")
            assert long.status_code == 200
            assert _held_bytes(cache) <= budget
            assert cache.size_bytes + cache.index_bytes <= budget
    assert not any(len(key[3]) > 60_000 for key in [*cache.entries, *cache.not_kept])


@pytest.mark.anyio
async def test_requests_waiting_for_a_first_render_that_hangs_render_themselves(monkeypatch):
    monkeypatch.setattr("news_site.responsecache.FIRST_RENDER_WAIT_SECONDS", 0.2)
    release = anyio.Event()
    calls = 0

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        nonlocal calls
        calls += 1
        if calls == 1:
            await release.wait()  # the first render hangs (a stuck query, a slow disk)
        headers = [(b"cache-control", b"public, max-age=60")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"page"})

    cache = PublicResponseCache(app, seconds=60)
    transport = httpx.ASGITransport(app=cache)
    async with (
        httpx.AsyncClient(transport=transport, base_url="http://testserver") as http,
        anyio.create_task_group() as group,
    ):
        group.start_soon(http.get, "/entries.rss")
        await anyio.sleep(0.05)
        with anyio.fail_after(5):
            waiting = await http.get("/entries.rss")
        release.set()
    assert waiting.status_code == 200 and waiting.content == b"page"
    assert calls == 2
