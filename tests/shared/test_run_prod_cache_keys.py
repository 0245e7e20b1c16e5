"""Through the deployed stack (scripts/run_prod.sh: nginx with the shipped config, gunicorn, the
demo data), the caches key a public read on the query parameters its surface reads
(news_site/cache_keys.py): a parameter no view reads is answered from nginx's copy, and
whatever else a query holds (a name twice, in another case or %-escaped, an invalid value)
its answer is the application's own answer to that query, never another request's copy.
"The application's own answer" is the same request with a cookie, which passes both caches."""

import ssl
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.run_prod import Stack, run_prod_stack, wait_ready

UNCACHED = {"Cookie": "uncached=1"}


@dataclass
class Served:
    stack: Stack
    client: httpx.Client

    def get(self, target: str, headers: dict[str, str] | None = None) -> httpx.Response:
        return self.client.get(self.stack.url("news", target), headers=headers)

    def same_as_uncached(self, target: str) -> httpx.Response:
        """`target` asked twice (the second may come from a copy the first left) and once
        past the caches: every answer the same; the first."""
        first, second = self.get(target), self.get(target)
        own = self.get(target, UNCACHED)
        assert own.headers["x-cache-status"] == "BYPASS"
        for answer in (first, second):
            assert (answer.status_code, answer.content) == (own.status_code, own.content), (
                target,
                answer.headers.get("x-cache-status"),
            )
        return first


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[Served]:
    # nginx's per-address limits off: the requests below come from one address, faster than
    # one reader asks.
    with run_prod_stack(tmp_path_factory.mktemp("run-prod"), {"RUN_PROD_EDGE_LIMITS": "off"}) as (
        stack
    ):
        # Not yet trusted: the script makes the certificate as it starts.
        with httpx.Client(transport=httpx.HTTPTransport(verify=False), timeout=10) as boot:
            wait_ready(stack, boot)
        trust = ssl.create_default_context(cafile=str(stack.run_dir / "localhost.pem"))
        with httpx.Client(verify=trust, timeout=30) as client:
            yield Served(stack, client)


def test_a_parameter_no_view_reads_is_answered_from_nginx_s_copy(served: Served):
    entry = served.get("/api/v1/entries?per_page=1").json()["data"][0]["id"]
    for page, busted in [
        ("/api/v1/entries?per_page=2&page=2", "/api/v1/entries?_=1&page=2&per_page=2&x="),
        ("/entries.json?items=3", "/entries.json?items=3&_=1732612345"),
        ("/entries.rss", "/entries.rss?utm_source=feedly"),
        (f"/entries/{entry}.md", f"/entries/{entry}.md?_=2"),
    ]:
        kept = served.get(page)
        assert kept.status_code == 200
        answers = [served.get(busted) for _ in range(2)]

        assert [a.headers["x-cache-status"] for a in answers] == ["HIT", "HIT"], busted
        assert all(answer.content == kept.content for answer in answers)


def test_a_name_given_twice_gets_the_application_s_answer_never_a_copy_of_either(served):
    pages = {n: served.get(f"/api/v1/entries?per_page=2&page={n}") for n in (1, 2)}
    assert pages[1].content != pages[2].content

    for target in (
        "/api/v1/entries?page=2&page=1&per_page=2",
        "/api/v1/entries?page=1&page=2&per_page=2",
        "/api/v1/entries?per_page=2&page=2&per_page=3",
    ):
        first = served.same_as_uncached(target)
        assert first.headers["x-cache-status"] != "HIT", target


def test_a_name_in_another_case_or_escaped_gets_the_application_s_answer(served: Served):
    page_one = served.get("/api/v1/entries?per_page=2&page=1")
    page_two = served.get("/api/v1/entries?per_page=2&page=2")

    # Django reads names as given and decoded: `PAGE` is not `page`, `pa%67e` is.
    assert served.same_as_uncached("/api/v1/entries?PAGE=2&per_page=2").content == page_one.content
    assert served.same_as_uncached("/api/v1/entries?pa%67e=2&per_page=2").content == (
        page_two.content
    )
    assert served.same_as_uncached("/api/v1/entries?Page=1&page=2&per_page=2").content == (
        page_two.content
    )


def test_an_invalid_value_is_refused_every_time_and_kept_nowhere(served: Served):
    valid = served.get("/api/v1/entries")
    assert valid.status_code == 200

    for target in (
        "/api/v1/entries?page=0",
        "/api/v1/entries?page=",
        "/api/v1/entries?page",
        "/api/v1/entries?per_page=abc&_=1",
        "/api/v1/entries?sort=oldest",
        "/api/v1/entries?token=x",
        "/api/v1/entries?format=xml",
    ):
        first = served.same_as_uncached(target)
        assert first.status_code in (400, 401, 404), target
        assert served.get(target).headers["x-cache-status"] != "HIT"
    assert served.get("/api/v1/entries").content == valid.content


def test_credentials_and_cookies_pass_nginx_s_cache_with_any_query(served: Served):
    served.get("/api/v1/entries?per_page=2")

    with_token = served.get(
        "/api/v1/entries?per_page=2&_=1", {"Authorization": "Bearer nws_unknown"}
    )
    with_cookie = served.get("/api/v1/entries?per_page=2&_=1", {"Cookie": "sessionid=x"})

    assert with_token.status_code == 401
    assert with_token.headers["x-cache-status"] == "BYPASS"
    assert with_cookie.status_code == 200
    assert with_cookie.headers["x-cache-status"] == "BYPASS"


# Queries as hostile clients write them: the names the lists read, in other cases, escaped,
# near misses and cache busters; values valid, invalid, empty or escaped; bare names and
# repeats.
names = st.sampled_from(
    ["page", "per_page", "sort", "lang", "cursor", "format", "PAGE", "Page", "pa%67e",
     "per%5Fpage", "%70age", "page+", "_", "x", ""]
)  # fmt: skip
values = st.sampled_from(
    ["1", "2", "3", "0", "", "abc", "%32", "2+", "popular", "latest", "en", "sv", "json", "2=3"]
)
items = st.one_of(names, st.tuples(names, values).map(lambda item: f"{item[0]}={item[1]}"))
queries = st.lists(items, max_size=5).map("&".join)


@given(st.sampled_from(["/api/v1/entries", "/api/v1/entries/popular", "/api/v1/tags"]), queries)
@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_a_cached_answer_is_the_application_s_own_answer_to_the_same_url(served, path, query):
    # Pages other queries leave in the caches, under the keys a wrong reading would hit.
    for kept in ("per_page=2", "per_page=2&page=2", "per_page=3&page=1&sort=popular"):
        served.get(f"{path}?{kept}")

    served.same_as_uncached(f"{path}?{query}")
