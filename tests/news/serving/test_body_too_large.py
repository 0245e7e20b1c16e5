"""A body larger than the service accepts, sent straight to gunicorn (no nginx in front to
refuse it first): 413 in the surface's error shape, never a 500. The same whether the client
gives the body's length or sends it chunked (shared/request_body.py), and a chunked body within the
limit is read whole."""

from collections.abc import Iterator

import httpx
import pytest
from django.conf import settings as django_settings

from tests.conftest import news_served

pytestmark = pytest.mark.django_db(transaction=True)

BIG = 3 * 1024 * 1024  # over Django's DATA_UPLOAD_MAX_MEMORY_SIZE of 2.5 MB


def test_an_oversized_body_is_413_in_each_surfaces_shape():
    limit = django_settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    login = b'{"provider": "email", "email": "' + b"a" * BIG + b'@example.se"}'
    with news_served({"NEWS_EMBEDDING_MODEL": "off"}) as server:
        api = httpx.post(
            f"{server.url}/api/v1/auth/login",
            content=login,
            headers={"Content-Type": "application/json"},
            timeout=30,
        )
        admin = httpx.post(f"{server.url}/admin/login/", data={"username": "x" * BIG}, timeout=30)
        small = httpx.post(
            f"{server.url}/api/v1/auth/login",
            json={"provider": "email", "email": "not-an-address"},
            timeout=30,
        )
        # httpx sends a body from an iterator chunked, with no Content-Length.
        chunked_api = httpx.post(
            f"{server.url}/api/v1/auth/login",
            content=in_chunks(login),
            headers={"Content-Type": "application/json"},
            timeout=30,
        )
        chunked_small = httpx.post(
            f"{server.url}/api/v1/auth/login",
            content=in_chunks(small.request.content),
            headers={"Content-Type": "application/json"},
            timeout=30,
        )

    assert api.status_code == 413
    assert api.json() == {
        "error": {
            "type": "payload_too_large",
            "message": f"the request body is larger than {limit} bytes",
        },
        "meta": {"api_version": "v1"},
    }
    assert admin.status_code == 413
    assert admin.headers["Content-Type"].startswith("text/plain")
    # A body within the limit is read as before.
    assert small.status_code == 400
    assert "transfer-encoding" not in small.request.headers
    assert chunked_small.request.headers["transfer-encoding"] == "chunked"
    assert (chunked_small.status_code, chunked_small.json()) == (400, small.json())
    assert (chunked_api.status_code, chunked_api.json()) == (413, api.json())


def in_chunks(body: bytes, size: int = 1000) -> Iterator[bytes]:
    for start in range(0, len(body), size):
        yield body[start : start + size]
