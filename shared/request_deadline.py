"""Every byte of a request within one deadline, counted in the server from its first byte.

uvicorn bounds nothing while a request arrives: headers sent one byte every few seconds, or a
body that trickles or never comes, keep a connection open for as long as the client likes
(its keep-alive timeout only runs between requests, and gunicorn's `timeout` never fires under
uvicorn workers). `shared/request_body.py` keeps such a request from holding a slot of the
application; this protocol closes it: from a connection's first byte (or the first byte of
each later request on it) to the last byte of the request's body, `deadline_seconds` at most.
Past it, a request with no answer started gets `408 Request Timeout` and the connection is
closed; the application, if it had the request, sees the client go away.

It is uvicorn's own httptools protocol with one timer per connection, armed when a request
begins and cancelled when its body is complete.
"""

import asyncio

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

TIMEOUT_BODY = b"the request did not arrive in time\n"
TIMEOUT_RESPONSE = (
    b"HTTP/1.1 408 Request Timeout\r\n"
    b"content-type: text/plain; charset=utf-8\r\n"
    b"content-length: %d\r\n"
    b"connection: close\r\n\r\n%s" % (len(TIMEOUT_BODY), TIMEOUT_BODY)
)


class DeadlineProtocol(HttpToolsProtocol):
    deadline_seconds: float = 10.0
    _deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        # A connection that never completes its first request is bounded too.
        self._arm()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._arm()

    def on_message_complete(self) -> None:
        self._disarm()
        super().on_message_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        if self._deadline is None:
            self._deadline = self.loop.call_later(self.deadline_seconds, self._expired)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expired(self) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        cycle = self.cycle
        if cycle is None or cycle.response_complete or not cycle.response_started:
            self.transport.write(TIMEOUT_RESPONSE)
        self.transport.close()


def deadline_protocol(seconds: float) -> type[DeadlineProtocol]:
    """The protocol with its deadline (uvicorn takes a protocol class, not an instance)."""
    return type("DeadlineProtocol", (DeadlineProtocol,), {"deadline_seconds": float(seconds)})
