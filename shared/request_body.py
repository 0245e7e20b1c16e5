"""Every request's body in whole, within a deadline, before the request takes a slot.

An ASGI server hands an application a request as soon as its headers are in; the body follows
as the client sends it. Read inside the application, a body that trickles (one byte every few
seconds) or never comes held whatever the request had already taken: a permit of the bound on
concurrent requests, a Django thread, a single-flight render. About a hundred such connections
took every slot of a worker, and every real request was refused with 503 for as long as they
held; uvicorn has no body deadline of its own, and gunicorn's `timeout` never fires for it.

This middleware sits outside all of that: it reads the body first, bounded in time
(`deadline_seconds` from the moment the request reached the application to its last byte) and
in size, and only then passes the request on. A slow body costs a coroutine and a socket, never
a slot: past the deadline it is answered 408 and the connection is closed.

Django, which reads a body by its `Content-Length`, is handed the body with its length (a
chunked body had none and reached Django empty: a login's JSON went missing). A body past
`max_bytes` goes on cut at one byte past it, with that length, so Django's
BodyTooLargeMiddleware (shared/http.py) answers 413 in the surface's own error shape without
anything reading the rest, exactly as for a body that declared its length.
"""

import asyncio
import logging

from starlette.types import ASGIApp, Message, Receive, Scope, Send

logger = logging.getLogger(__name__)

_LENGTH_HEADERS = {b"content-length", b"transfer-encoding"}
TIMEOUT_BODY = b"the request body did not arrive in time\n"
# The news service's NEWS_REQUEST_BODY_SECONDS unless set.
DEFAULT_DEADLINE_SECONDS = 10


class WholeBody:
    def __init__(self, app: ASGIApp, *, max_bytes: int | None, deadline_seconds: float) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.deadline_seconds = deadline_seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not _has_body(scope["headers"]):
            await self.app(scope, receive, send)
            return
        try:
            async with asyncio.timeout(self.deadline_seconds):
                body = await self._read(receive)
        except TimeoutError:
            logger.warning(
                "request body of %s %s not in within %s s: answered 408",
                scope["method"],
                scope["path"],
                self.deadline_seconds,
            )
            await _request_timeout(send)
            return
        if body is None:  # the client went away
            return
        headers = [(name, value) for name, value in scope["headers"] if name not in _LENGTH_HEADERS]
        headers.append((b"content-length", str(len(body)).encode()))
        await self.app({**scope, "headers": headers}, _replay(body, receive), send)

    async def _read(self, receive: Receive) -> bytes | None:
        chunks: list[bytes] = []
        size = 0
        while self.max_bytes is None or size <= self.max_bytes:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        return body if self.max_bytes is None else body[: self.max_bytes + 1]


def _has_body(headers: list[tuple[bytes, bytes]]) -> bool:
    for name, value in headers:
        if name == b"transfer-encoding" and b"chunked" in value.lower():
            return True
        if name == b"content-length" and value.strip() not in (b"", b"0"):
            return True
    return False


async def _request_timeout(send: Send) -> None:
    headers = [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(TIMEOUT_BODY)).encode()),
        # The rest of the body may still be on its way: the connection cannot be reused.
        (b"connection", b"close"),
    ]
    await send({"type": "http.response.start", "status": 408, "headers": headers})
    await send({"type": "http.response.body", "body": TIMEOUT_BODY})


def _replay(body: bytes, receive: Receive) -> Receive:
    """The buffered body as one message, then the connection's own (its disconnect)."""
    given = False

    async def replay() -> Message:
        nonlocal given
        if given:
            return await receive()
        given = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay
