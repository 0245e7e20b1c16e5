"""A bound on the requests one ASGI worker process serves at once.

An event loop accepts every connection it is given, and Django runs each request's view on a
thread of its own, so without a bound a burst becomes hundreds of threads in one process, all
queueing for the database pool and for the CPU, each answered later than the last. Past the
bound a request is answered at once with 503 and `Retry-After: 1`, in the error shape of the
surface it asked for, so that overload costs microseconds instead of a queue that holds
connections (nginx may then serve a stale copy, and well-behaved clients come back).

Liveness and metrics stay outside the bound: an overloaded process is still alive, and its
metrics are what an operator reads to see the overload.
"""

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass

from starlette.types import ASGIApp, Receive, Scope, Send

logger = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 1
BUSY_MESSAGE = "the service is busy: try again shortly"
PLAIN_MESSAGE = BUSY_MESSAGE.encode() + b"\n"
# One log line a second during a burst says how many requests were refused.
_LOG_INTERVAL = 1.0


@dataclass(frozen=True)
class Refusal:
    """The 503 body for requests whose path starts with `prefix`."""

    prefix: str
    content_type: bytes
    body: bytes


class ConcurrencyLimit:
    def __init__(
        self,
        app: ASGIApp,
        *,
        limit: int,
        refusals: Sequence[Refusal] = (),
        exempt: Sequence[str] = ("/healthz", "/metrics"),
    ) -> None:
        self.app = app
        self.limit = limit
        self.refusals = refusals
        self.exempt = frozenset(exempt)
        # One event loop per process: the counter needs no lock.
        self.active = 0
        self._refused = 0
        self._logged_at = 0.0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self.limit <= 0 or scope["path"] in self.exempt:
            await self.app(scope, receive, send)
            return
        if self.active >= self.limit:
            await self._refuse(scope, send)
            return
        self.active += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.active -= 1

    async def _refuse(self, scope: Scope, send: Send) -> None:
        self._log_refusal()
        content_type, body = b"text/plain; charset=utf-8", PLAIN_MESSAGE
        for refusal in self.refusals:
            if scope["path"].startswith(refusal.prefix):
                content_type, body = refusal.content_type, refusal.body
                break
        headers = [
            (b"content-type", content_type),
            (b"content-length", str(len(body)).encode()),
            (b"retry-after", str(RETRY_AFTER_SECONDS).encode()),
            (b"cache-control", b"no-store"),
        ]
        await send({"type": "http.response.start", "status": 503, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    def _log_refusal(self) -> None:
        self._refused += 1
        now = time.monotonic()
        if now - self._logged_at >= _LOG_INTERVAL:
            logger.warning(
                "worker busy (%d requests at once): %d request(s) refused with 503",
                self.limit,
                self._refused,
            )
            self._refused, self._logged_at = 0, now
