"""A WSGI application (Django) served inside an ASGI worker, on a fixed pool of threads, with
one hand-over to a thread and one back per request.

a2wsgi's WSGIMiddleware, which this replaces, hands every response message back to the event
loop on its own and blocks the thread until the loop has queued it: the start of the response,
each chunk of the body and its end, three round trips between the threads for a page of JSON,
each a wake-up of the loop and a hand-over of the GIL. Under load those hand-overs cost about
as much CPU as the rest of the Django request answered from memory (docs/api-performance.md).

Here the thread runs the whole WSGI call and returns the response whole; the event loop sends
it. Every response of ours is a body in memory (Django's JSON, HTML and feeds, WhiteNoise's
static files of at most a few hundred kilobytes), so nothing is held back that would have been
sent sooner. The request body is whole before it gets here (shared/request_body.py), so the
application reads it from memory and never waits on the loop either.
"""

import asyncio
import contextvars
import functools
import io
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from a2wsgi.wsgi import build_environ
from a2wsgi.wsgi_typing import Environ
from starlette.types import Receive, Scope, Send


@dataclass(frozen=True)
class WholeResponse:
    status: int
    headers: list[tuple[bytes, bytes]]
    body: bytes


class WsgiOnThreads:
    def __init__(self, app: Any, *, threads: int) -> None:
        self.app = app
        self.executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="WSGI")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan goes to the tool server (news_site/router.py)
            return
        body = await _body(receive)
        if body is None:  # the client went away
            return
        environ = build_environ(scope, io.BytesIO(body))  # type: ignore[arg-type]
        # The thread sees what the layers above set for this request (its id, for the logs).
        context = contextvars.copy_context()
        respond = functools.partial(context.run, self._respond, environ)
        response = await asyncio.get_running_loop().run_in_executor(self.executor, respond)
        await send(
            {"type": "http.response.start", "status": response.status, "headers": response.headers}
        )
        await send({"type": "http.response.body", "body": response.body})

    def _respond(self, environ: Environ) -> WholeResponse:
        started: list[tuple[str, list[tuple[str, str]]]] = []
        written: list[bytes] = []

        # Nothing is sent before the call returns, so a second call (an application replacing
        # its answer after an error, with exc_info) simply replaces the first.
        def start_response(
            status: str, headers: list[tuple[str, str]], exc_info: Any = None
        ) -> Any:
            started[:] = [(status, headers)]
            return written.append

        iterable: Iterable[bytes] = self.app(environ, start_response)
        try:
            written.extend(iterable)
        finally:
            close = getattr(iterable, "close", None)
            if close is not None:
                close()
        status, headers = started[0]
        return WholeResponse(
            status=int(status.split(" ", 1)[0]),
            headers=[
                (name.lower().encode("latin1"), value.encode("latin1")) for name, value in headers
            ],
            body=b"".join(written),
        )


async def _body(receive: Receive) -> bytes | None:
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)
