"""A WSGI application on the worker's threads answers through the ASGI interface exactly as it
would under a WSGI server: its status, headers, every byte it returns or writes, the request
body it reads, and what the layers above set for the request (context variables)."""

import asyncio
import contextvars
import threading
from typing import Any

import httpx
from hypothesis import given
from hypothesis import strategies as st

from shared.wsgi_threads import WsgiOnThreads

REQUEST_TAG: contextvars.ContextVar[str] = contextvars.ContextVar("request_tag", default="")


def echo(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    """Answers with the request body, the header X-Value repeated, part of the answer through
    `write` and part returned, as WSGI allows both."""
    body = environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
    write = start_response(
        "201 Created",
        [
            ("Content-Type", "application/octet-stream"),
            ("X-Value", environ.get("HTTP_X_VALUE", "")),
            ("X-Tag", REQUEST_TAG.get()),
        ],
    )
    write(body[:1])
    return [body[1:], b"!"]


def tagged(app: WsgiOnThreads) -> Any:
    async def outer(scope: dict[str, Any], receive: Any, send: Any) -> None:
        REQUEST_TAG.set(f"tag-{scope['path']}")
        await app(scope, receive, send)

    return outer


async def _answer(body: bytes, value: str) -> httpx.Response:
    app = tagged(WsgiOnThreads(echo, threads=2))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        return await client.post("/echo", content=body, headers={"X-Value": value.encode("latin1")})


@given(
    body=st.binary(max_size=4096),
    value=st.text(alphabet=st.characters(min_codepoint=0x21, max_codepoint=0xFF), max_size=40),
)
def test_the_answer_is_what_the_application_wrote_and_returned(body: bytes, value: str) -> None:
    response = asyncio.run(_answer(body, value))
    assert response.status_code == 201
    assert response.content == body + b"!"
    assert dict(response.headers.raw)[b"x-value"] == value.encode("latin1")
    assert response.headers["x-tag"] == "tag-/echo"


def test_answers_in_parallel_on_as_many_threads_as_it_has() -> None:
    """Two requests whose application waits for the other to arrive both finish: each runs on
    a thread of its own."""

    both_in = threading.Barrier(2, timeout=30)

    def waits_for_the_other(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        both_in.wait()
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [environ["PATH_INFO"].encode()]

    async def two() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=WsgiOnThreads(waits_for_the_other, threads=2))
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            return await asyncio.gather(client.get("/a"), client.get("/b"))

    first, second = asyncio.run(two())
    assert (first.status_code, first.text, second.status_code, second.text) == (
        200,
        "/a",
        200,
        "/b",
    )
