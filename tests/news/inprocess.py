"""The application in the test's own process: an httpx client whose transport is Django's test
client, for tests of endpoint behaviour (the live server is for tests of the server itself).

Assertions stay those of an HTTP client (`httpx.Response`), the requests run through the whole
middleware stack with CSRF checks on, and `served_queries` counts the SQL each request runs.
Conftests of the converted directories import `http` and `served_queries` from here.
"""

from collections.abc import Iterator

import httpx
import pytest
from django.db import connection
from django.test import Client
from django.test.client import ClientHandler

from tests.conftest import ServedQueries

# Django's test host, which the test settings allow.
BASE_URL = "http://testserver"
# Headers the test client derives itself from the body it is given.
_OWN_HEADERS = {"content-length", "content-type"}


class DjangoTransport(httpx.BaseTransport):
    """Hands each httpx request to `django.test.Client` and the answer back as httpx's."""

    def __init__(self, queries: ServedQueries) -> None:
        # A server error comes back as the 500 response a client would see, not as an exception.
        self.client = Client(enforce_csrf_checks=True, raise_request_exception=False)
        self.queries = queries

    def _record(self, execute, sql, params, many, context):
        self.queries.append(sql)
        return execute(sql, params, many, context)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _OWN_HEADERS}
        with connection.execute_wrapper(self._record):
            response = self.client.generic(
                request.method,
                request.url.raw_path.decode("ascii"),
                data=request.read(),
                content_type=request.headers.get("content-type", ""),
                secure=request.url.scheme == "https",
                headers=headers,
            )
            content = (
                b"".join(response.streaming_content) if response.streaming else response.content
            )
        cookies = [("Set-Cookie", morsel.OutputString()) for morsel in response.cookies.values()]
        headers = [*response.items(), *cookies]
        if not response.has_header("Content-Length"):
            headers.append(("Content-Length", str(len(content))))
        # A stream rather than `content`: httpx times the exchange while it reads a stream
        # (`elapsed`, which schemathesis' response checks read).
        return httpx.Response(
            response.status_code,
            headers=headers,
            stream=httpx.ByteStream(content),
            request=request,
        )


def wsgi_application(environ: dict, start_response):
    """A WSGI application over Django's test handler, for WSGI clients such as schemathesis'.
    The handler keeps the test's connection (and its transaction) open across requests, which
    Django's own WSGIHandler would close after each one."""
    response = _HANDLER(environ)
    content = b"".join(response.streaming_content) if response.streaming else response.content
    cookies = [("Set-Cookie", morsel.OutputString()) for morsel in response.cookies.values()]
    start_response(
        f"{response.status_code} {response.reason_phrase}", [*response.items(), *cookies]
    )
    return [content]


_HANDLER = ClientHandler(enforce_csrf_checks=True)


@pytest.fixture
def served_queries() -> ServedQueries:
    return ServedQueries()


@pytest.fixture
def http(db, served_queries: ServedQueries) -> Iterator[httpx.Client]:
    transport = DjangoTransport(served_queries)
    with httpx.Client(transport=transport, base_url=BASE_URL, timeout=30) as client:
        yield client
