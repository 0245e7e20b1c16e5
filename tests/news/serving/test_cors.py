"""CORS of the news service, on gunicorn with uvicorn workers and the per-process response
cache as deployed: any origin may read /api/v1, the legacy JSON and the agent surfaces (no
credentials: tokens travel in Authorization); admin, the HTML pages and /mcp get no CORS."""

from collections.abc import Iterator

import httpx
import pytest

from tests.conftest import Gunicorn, news_served

pytestmark = pytest.mark.django_db(transaction=True)

APP = "https://app.example"


@pytest.fixture(scope="module")
def server(django_db_setup) -> Iterator[Gunicorn]:
    """One server for the module (starting one takes seconds); each test makes its own rows."""
    with news_served(
        {
            "NEWS_RESPONSE_CACHE_SECONDS": "30",
            "NEWS_SEARCH_RATE_LIMIT": "1/10m",
            "NEWS_EMBEDDING_MODEL": "off",
        }
    ) as server:
        yield server


@pytest.fixture
def served(server, make_feed, make_entry, make_tag):
    feed = make_feed()
    return server, make_entry(feed, tags=[make_tag("iPhone")])


def test_a_preflight_of_the_api_is_answered_for_any_origin(served):
    server, _entry = served

    response = httpx.options(
        f"{server.url}/api/v1/auth/login",
        headers={
            "Origin": APP,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type",
        },
    )

    assert response.status_code == 200
    assert response.headers["Access-Control-Allow-Origin"] == "*"
    assert "Access-Control-Allow-Credentials" not in response.headers
    methods = response.headers["Access-Control-Allow-Methods"].split(", ")
    assert {"GET", "POST", "DELETE"} <= set(methods)
    allowed = response.headers["Access-Control-Allow-Headers"].split(", ")
    assert {"authorization", "content-type"} <= set(allowed)
    assert int(response.headers["Access-Control-Max-Age"]) > 0


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/entries",
        "/api/v1/entries/{id}",
        "/entries.json",
        "/entries/{id}.json",
        "/feeds.json",
        "/tags.json",
        "/entries/{id}.md",
        "/index.md",
        "/llms.txt",
        "/entries.rss",
    ],
)
def test_every_public_read_surface_may_be_read_from_any_origin(served, path):
    server, entry = served

    response = httpx.get(server.url + path.format(id=entry.pk), headers={"Origin": APP})

    assert response.status_code == 200
    assert response.headers["Access-Control-Allow-Origin"] == "*"
    assert "origin" in response.headers["Vary"].lower()
    assert "Retry-After" in response.headers["Access-Control-Expose-Headers"]


def test_a_rate_limited_answer_lets_the_page_read_retry_after(served):
    server, _entry = served
    httpx.get(f"{server.url}/api/v1/entries/search", params={"q": "iphone"})

    limited = httpx.get(
        f"{server.url}/api/v1/entries/search", params={"q": "iphone"}, headers={"Origin": APP}
    )

    assert limited.status_code == 429
    assert limited.headers["Access-Control-Allow-Origin"] == "*"
    exposed = limited.headers["Access-Control-Expose-Headers"].split(", ")
    assert {"Retry-After", "RateLimit", "RateLimit-Policy"} <= set(exposed)
    assert int(limited.headers["Retry-After"]) > 0


@pytest.mark.parametrize("path", ["/admin/login/", "/", "/entries/{id}"])
def test_admin_and_the_html_pages_get_no_cors(served, path):
    server, entry = served
    url = server.url + path.format(id=entry.pk)

    read = httpx.get(url, headers={"Origin": APP})
    preflight = httpx.options(url, headers={"Origin": APP, "Access-Control-Request-Method": "POST"})

    assert read.status_code == 200
    assert "Access-Control-Allow-Origin" not in read.headers
    assert "Access-Control-Allow-Origin" not in preflight.headers


def test_the_html_pages_policy_admits_their_inline_style_and_images_only(served):
    server, _entry = served

    page = httpx.get(server.url + "/")

    policy = page.headers["Content-Security-Policy"]
    assert "default-src 'none'" in policy
    assert "style-src 'unsafe-inline'" in policy
    assert "img-src https: data:" in policy
    assert "script-src" not in policy
    assert "frame-ancestors 'none'" in policy


def test_the_mcp_endpoint_refuses_foreign_origins_and_sends_no_cors(served):
    server, _entry = served
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}

    foreign = httpx.post(
        f"{server.url}/mcp",
        json=call,
        headers={"Origin": APP, "Accept": "application/json, text/event-stream"},
    )
    preflight = httpx.options(
        f"{server.url}/mcp",
        headers={"Origin": APP, "Access-Control-Request-Method": "POST"},
    )

    assert foreign.status_code == 403
    assert preflight.status_code == 405
    for response in (foreign, preflight):
        assert not any(name.startswith("access-control-") for name in response.headers)


def test_the_response_cache_keeps_each_origins_cors_headers(served):
    server, _entry = served
    # A query string of its own: the other tests of the module fill the cache of /entries.json.
    url = f"{server.url}/entries.json?items=7"

    # A request without Origin (an app, an agent) fills the cache first ...
    plain = httpx.get(url)
    # ... a browser's request must not get that copy without its CORS header ...
    browser = httpx.get(url, headers={"Origin": APP})
    browser_again = httpx.get(url, headers={"Origin": APP})
    other_site = httpx.get(url, headers={"Origin": "https://other.example"})
    plain_again = httpx.get(url)

    assert "Access-Control-Allow-Origin" not in plain.headers
    assert browser.headers["Access-Control-Allow-Origin"] == "*"
    assert "age" not in browser.headers
    # ... while repeats of each variant are served from memory with the right headers.
    assert "age" in browser_again.headers
    assert browser_again.headers["Access-Control-Allow-Origin"] == "*"
    assert other_site.headers["Access-Control-Allow-Origin"] == "*"
    assert "age" in plain_again.headers
    assert "Access-Control-Allow-Origin" not in plain_again.headers
