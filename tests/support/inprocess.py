"""The application in the test's own process: an httpx client whose transport is Django's test
client, for tests of endpoint behaviour (the live server is for tests of the server itself).

Assertions stay those of an HTTP client (`httpx.Response`), the requests run through the whole
middleware stack with CSRF checks on, and `served_queries` counts the SQL each request runs.
A plugin of every suite (`pytest_plugins` in tests/conftest.py): `http` and `served_queries`.
"""

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import pytest
from django.db import connection
from django.db.backends.signals import connection_created
from django.test import Client
from django.test.client import ClientHandler


class ServedQueries(list[str]):
    """SQL the application ran while a test talked to it: in the test's own process (recorded
    by `DjangoTransport`), or on a server's threads (a server in the test process answers each
    request on a new thread with its own connection, which a capture on the test's thread
    would not see)."""

    @contextmanager
    def at_most(self, budget: int) -> Iterator[None]:
        start = len(self)
        yield
        used = len(self) - start
        # At least one query, or the count measured nothing.
        assert 0 < used <= budget, f"{used} queries, budget {budget}: {self[start:]}"

    @contextmanager
    def none(self) -> Iterator[None]:
        """No query at all; pair it with an `at_most` on the same path, which shows that the
        capture sees that path's queries."""
        start = len(self)
        yield
        assert len(self) == start, f"expected no query: {self[start:]}"


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
def served_queries() -> Iterator[ServedQueries]:
    queries = ServedQueries()
    test_thread = threading.get_ident()

    def record(execute, sql, params, many, context):
        # The test's own thread is counted by DjangoTransport, once per request it hands on.
        if threading.get_ident() != test_thread:
            queries.append(sql)
        return execute(sql, params, many, context)

    def instrument(sender, connection, **kwargs) -> None:
        # A wrapper object can connect more than once; count its queries once.
        if record not in connection.execute_wrappers:
            connection.execute_wrappers.append(record)

    connection_created.connect(instrument)
    yield queries
    connection_created.disconnect(instrument)


@pytest.fixture
def http(db, served_queries: ServedQueries) -> Iterator[httpx.Client]:
    transport = DjangoTransport(served_queries)
    with httpx.Client(transport=transport, base_url=BASE_URL, timeout=30) as client:
        yield client
