"""The per-process cache of public responses, on gunicorn with uvicorn workers as deployed."""

import asyncio
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from django.db import connection, transaction

from news_site.news.models import Feed
from tests.conftest import Gunicorn, news_served

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(scope="module")
def server(django_db_setup) -> Iterator[Gunicorn]:
    """One server for the module (starting one takes seconds). Each test reads the page of its
    own feed, so no copy another test left in the server's memory can answer it."""
    with news_served({"NEWS_RESPONSE_CACHE_SECONDS": "2"}) as server:
        yield server


@pytest.fixture
def served(server, make_feed, make_entry):
    feed = make_feed()
    first = make_entry(feed, title="Första nyheten")
    return server, feed, first


def feed_page(server: Gunicorn, feed: Feed) -> str:
    """The feed's public list of entries (the legacy JSON)."""
    return f"{server.url}/feeds/{feed.pk}.json"


def titles(response: httpx.Response) -> list[str]:
    return [entry["title"] for entry in response.json()["entries"]]


def test_a_public_page_is_served_from_memory_until_it_expires(served, make_entry):
    server, feed, _first = served
    before = httpx.get(feed_page(server, feed))
    make_entry(feed, title="Andra nyheten")

    cached = httpx.get(feed_page(server, feed))
    time.sleep(2.2)
    fresh = httpx.get(feed_page(server, feed))

    assert titles(cached) == titles(before) == ["Första nyheten"]
    assert "age" in cached.headers
    assert "Andra nyheten" in titles(fresh)


def test_a_hit_lowers_max_age_by_its_age(served):
    server, feed, _first = served
    httpx.get(feed_page(server, feed))
    time.sleep(1.1)

    hit = httpx.get(feed_page(server, feed))

    age = int(hit.headers["age"])
    assert age >= 1
    assert hit.headers["cache-control"] == f"public, max-age={60 - age}"


@pytest.mark.parametrize(
    "headers",
    [{"Cookie": "sessionid=abc"}, {"Authorization": "Bearer x"}, {"If-None-Match": '"x"'}],
)
def test_requests_with_credentials_or_conditions_go_to_the_application(served, make_entry, headers):
    server, feed, _first = served
    httpx.get(feed_page(server, feed))
    make_entry(feed, title="Andra nyheten")

    response = httpx.get(feed_page(server, feed), headers=headers)

    assert "age" not in response.headers
    assert "Andra nyheten" in titles(response)


def test_variants_negotiated_by_accept_are_kept_apart(served):
    server, _feed, first = served
    url = f"{server.url}/entries/{first.pk}"
    markdown = httpx.get(url, headers={"Accept": "text/markdown"})
    html = httpx.get(url, headers={"Accept": "text/html"})

    again_markdown = httpx.get(url, headers={"Accept": "text/markdown"})
    again_html = httpx.get(url, headers={"Accept": "text/html"})

    assert markdown.headers["content-type"].startswith("text/markdown")
    assert html.headers["content-type"].startswith("text/html")
    assert "age" in again_markdown.headers and "age" in again_html.headers
    assert again_markdown.text == markdown.text
    assert again_html.text == html.text
    assert again_markdown.headers["content-type"] == markdown.headers["content-type"]


def test_errors_and_private_pages_are_never_kept(served):
    server, _feed, _first = served
    for _ in range(2):
        missing = httpx.get(f"{server.url}/entries/999999.json")
        admin = httpx.get(f"{server.url}/admin/login/")
        assert missing.status_code == 404
        assert "age" not in missing.headers
        assert "age" not in admin.headers


def test_a_page_with_no_copy_yet_is_rendered_once_for_requests_arriving_together(served):
    """Sixteen clients at a page the worker has no copy of: one renders it, the others wait for
    its copy. The render is held on a table lock until all of them have arrived."""
    server, feed, _first = served
    url = feed_page(server, feed)

    async def sixteen_at_once() -> list[httpx.Response]:
        async with httpx.AsyncClient(timeout=30) as client:
            return await asyncio.gather(*(client.get(url) for _ in range(16)))

    with ThreadPoolExecutor(1) as pool:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("LOCK TABLE news_feed IN ACCESS EXCLUSIVE MODE")
            answers = pool.submit(asyncio.run, sixteen_at_once())
            time.sleep(1)
        responses = answers.result()

    assert [response.status_code for response in responses] == [200] * 16
    assert sum("age" not in response.headers for response in responses) == 1
    assert len({response.text for response in responses}) == 1
