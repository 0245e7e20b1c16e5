"""The response cache keys a page on the query parameters its view read (shared/query_reads.py):
a parameter no view reads cannot turn a kept page into a render, a parameter a view reads always
can, and a kept copy answers only requests that would have been answered the same."""

from collections.abc import Iterator
from urllib.parse import quote

import httpx
import pytest
from django.http import QueryDict
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.types import Receive, Scope, Send

from news_site.responsecache import PublicResponseCache
from shared.query_reads import ALL, RESPONSE_HEADER, ReadRecordingQueryDict
from tests.conftest import Gunicorn, news_served


@pytest.fixture(scope="module")
def server(django_db_setup) -> Iterator[Gunicorn]:
    with news_served({"NEWS_RESPONSE_CACHE_SECONDS": "60"}) as server:
        yield server


@pytest.fixture
def served(server, transactional_db, make_feed, make_entry) -> Gunicorn:
    feed = make_feed()
    for n in range(3):
        make_entry(feed, title=f"Nyhet {n}")
    return server


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("path", ["/entries.json?items=2", "/api/v1/entries?per_page=2"])
def test_a_parameter_no_view_reads_is_answered_from_the_kept_copy(served, path):
    first = httpx.get(f"{served.url}{path}&_=1")
    busted = [httpx.get(f"{served.url}{path}&_={n}&other=x{n}") for n in range(2, 6)]

    plain = httpx.get(f"{served.url}{path}")
    # A name nginx could read otherwise than Django (%-escaped): nginx keys it on the whole URI.
    escaped = httpx.get(f"{served.url}{path}&x%5Fy=1")

    assert first.status_code == 200
    assert RESPONSE_HEADER not in first.headers
    for response in (*busted, escaped):
        assert response.status_code == 200
        assert "age" in response.headers, response.headers
        assert response.content == first.content
        assert RESPONSE_HEADER not in response.headers
    # nginx keys these on the parameters the surface reads too (news_site/cache_keys.py): it
    # may keep the copy, which every one of them shares. Keyed on the whole URI, a request with
    # a parameter no view reads is not kept there (one copy per cache buster otherwise).
    for response in (first, *busted, plain):
        assert "x-accel-expires" not in response.headers
    assert escaped.headers["x-accel-expires"] == "0"


@pytest.mark.django_db(transaction=True)
def test_a_parameter_the_view_reads_is_its_own_key(served):
    httpx.get(f"{served.url}/api/v1/entries?per_page=1&_=a")
    other = httpx.get(f"{served.url}/api/v1/entries?per_page=3&_=b")
    twice = httpx.get(f"{served.url}/api/v1/entries?per_page=3&per_page=1&_=c")

    assert "age" not in other.headers
    assert len(other.json()["data"]) == 3
    # Given twice, keyed on both values: never the copy of either alone.
    assert "age" not in twice.headers


class Reader:
    """A view that reads `a`, and `b` only when `a` is "1": the second read depends on the
    first, as a real view's may. Its answer is what it read."""

    def __init__(self) -> None:
        self.calls = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.calls += 1
        reads: set[str] = set()
        query = ReadRecordingQueryDict(QueryDict(scope["query_string"]), reads)
        answer = [query.getlist("a")]
        if query.get("a") == "1":
            answer.append(query.getlist("b"))
        body = repr(answer).encode()
        headers = [
            (b"cache-control", b"public, max-age=60"),
            (RESPONSE_HEADER.lower().encode(), ",".join(sorted(reads)).encode()),
        ]
        asked = dict(scope["headers"]).get(b"x-report-query-reads")
        assert asked == b"1"
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def _expected(query: str) -> bytes:
    parsed = QueryDict(query)
    answer = [parsed.getlist("a")]
    if parsed.get("a") == "1":
        answer.append(parsed.getlist("b"))
    return repr(answer).encode()


names = st.sampled_from(["a", "b", "c", "_", "a%20", "%61", "b[]"])
values = st.sampled_from(["", "1", "2", "1%00", "%31", "+1", "1+", "ä", quote("å")])
pair = st.tuples(names, values).map(lambda p: f"{p[0]}={p[1]}") | names
queries = st.lists(pair, max_size=5).map("&".join)


# A path no surface declares, and one whose declaration (`items`, news_site/cache_keys.py) is
# not what this view reads: the kept copies must be right either way.
@pytest.mark.parametrize("path", ["/list.json", "/entries.json"])
@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(queries, min_size=2, max_size=8))
def test_a_kept_copy_answers_only_what_the_view_would_have_answered(path, asked):
    """Whatever the queries (spellings, escapes, repeats, parameters read only sometimes), each
    answer through the cache is the view's own answer to that query."""
    import asyncio

    async def run() -> None:
        cache = PublicResponseCache(Reader(), seconds=60)
        transport = httpx.ASGITransport(app=cache)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
            for query in asked * 2:
                response = await http.get(f"{path}?{query}")
                assert response.content == _expected(query), (query, response.headers)
                assert RESPONSE_HEADER.lower() not in response.headers

    asyncio.run(run())


def test_a_view_that_reads_the_whole_query_is_keyed_on_all_of_it():
    reads: set[str] = set()
    query = ReadRecordingQueryDict(QueryDict("a=1&b=2"), reads)

    assert dict(query.items()) == {"a": "1", "b": "2"}
    assert ALL in reads


def test_requests_waiting_for_a_first_render_get_its_copy_under_the_key_it_taught():
    """Clients arriving while a page's first render runs are keyed on the raw query; the render
    teaches what the view reads, and they get its copy instead of rendering again."""
    import asyncio

    class SlowReader(Reader):
        async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
            await asyncio.sleep(0.1)  # the others arrive while it renders
            await super().__call__(scope, receive, send)

    async def run() -> int:
        reader = SlowReader()
        cache = PublicResponseCache(reader, seconds=60)
        transport = httpx.ASGITransport(app=cache)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
            answers = await asyncio.gather(*(http.get("/list.json?a=2") for _ in range(8)))
        assert all(answer.content == _expected("a=2") for answer in answers)
        return reader.calls

    assert asyncio.run(run()) == 1


class Reading:
    """A view that reads the parameters it is given, and answers what it read."""

    def __init__(self, *names: str) -> None:
        self.names = names

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        reads: set[str] = set()
        query = ReadRecordingQueryDict(QueryDict(scope["query_string"]), reads)
        body = repr([query.getlist(name) for name in self.names]).encode()
        headers = [
            (b"cache-control", b"public, max-age=60"),
            (RESPONSE_HEADER.lower().encode(), ",".join(sorted(reads)).encode()),
        ]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})


@pytest.mark.parametrize(
    ("names", "target", "kept_by_nginx"),
    [
        # /entries.json declares `items` (news_site/cache_keys.py): nginx keys this on it.
        (("items",), "/entries.json?items=2&_=1", True),
        # A view reading more than its surface declares: nginx's key would miss `a`.
        (("items", "a"), "/entries.json?items=2&a=1", False),
        (("items", "a"), "/entries.json?items=2", False),
        # No surface declares /list.json: nginx keys it on the whole URI, and keeps no copy
        # per parameter its view does not read.
        (("a",), "/list.json?a=2", True),
        (("a",), "/list.json?a=2&_=1", False),
    ],
)
def test_nginx_keeps_an_answer_only_where_its_key_holds_what_the_view_read(
    names, target, kept_by_nginx
):
    import asyncio

    async def run() -> list[httpx.Response]:
        cache = PublicResponseCache(Reading(*names), seconds=60)
        transport = httpx.ASGITransport(app=cache)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
            # The render, then the kept copy.
            return [await http.get(target) for _ in range(2)]

    for response in asyncio.run(run()):
        assert ("x-accel-expires" not in response.headers) is kept_by_nginx, response.headers
