"""Chunked request bodies given a length, for Django under ASGI.

The news service runs Django as the WSGI application it is, through a2wsgi (news_site/asgi.py),
and WSGI Django reads a request body by its `Content-Length`. A body sent with
`Transfer-Encoding: chunked` has none, so it reached Django empty: a login's JSON went missing
and the answer spoke of a missing field. nginx buffers bodies and sends a length (production
through it never saw this); a client straight on gunicorn did.

This middleware reads such a body whole, then hands it on with its length. It reads at most
one byte past DATA_UPLOAD_MAX_MEMORY_SIZE: a longer body goes on cut there, with that length,
so Django's BodyTooLargeMiddleware (shared/http.py) answers 413 in the surface's own error
shape without anything reading it, exactly as for a body that declared its length.
"""

from starlette.types import ASGIApp, Message, Receive, Scope, Send

_LENGTH_HEADERS = {b"content-length", b"transfer-encoding"}


class ChunkedBodyLength:
    def __init__(self, app: ASGIApp, *, max_bytes: int | None) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not _chunked(scope["headers"]):
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        while self.max_bytes is None or size <= self.max_bytes:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        if self.max_bytes is not None:
            body = body[: self.max_bytes + 1]
        headers = [(name, value) for name, value in scope["headers"] if name not in _LENGTH_HEADERS]
        headers.append((b"content-length", str(len(body)).encode()))
        await self.app({**scope, "headers": headers}, _replay(body, receive), send)


def _chunked(headers: list[tuple[bytes, bytes]]) -> bool:
    return any(
        name == b"transfer-encoding" and b"chunked" in value.lower() for name, value in headers
    )


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
