"""The Redis connections the caches use: a Redis that hangs costs a process one timeout, not
one per call.

Every call already ends after the socket timeouts (`cache_options`: 2 s to connect, 2 s to
answer). A Redis that stopped answering without closing its connections (a partition, a
stopped or swapping server) would still cost that on every call, and a request makes several
(limits, marks, generations, and redis-py retries each); so once a call has timed out, this
process fails every call at once for SKIP_SECONDS, as a refused connection fails, and then
tries again. The callers are fail-open already (shared/cache.py, shared/ratelimit.py), so a
request answers within one timeout plus its own work. A refused connection (a Redis that is
down) costs nothing and skips nothing.
"""

import threading
import time
from typing import Any

from redis.connection import (
    AbstractConnection,
    Connection,
    SSLConnection,
    UnixDomainSocketConnection,
)
from redis.exceptions import ConnectionError, TimeoutError

# Socket timeouts of every call on the request path (seconds).
CONNECT_TIMEOUT_SECONDS = 2
ANSWER_TIMEOUT_SECONDS = 2
# How long a process leaves Redis alone after a call timed out.
SKIP_SECONDS = 5

_skip_until = 0.0
_skip_lock = threading.Lock()


def _timed_out() -> None:
    global _skip_until
    with _skip_lock:
        _skip_until = time.monotonic() + SKIP_SECONDS


def _refuse_while_skipping() -> None:
    if time.monotonic() < _skip_until:
        raise ConnectionError("skipped: a Redis call of this process timed out moments ago")


class _SkipAfterTimeout(AbstractConnection):
    def connect(self) -> None:
        _refuse_while_skipping()
        try:
            super().connect()  # type: ignore[no-untyped-call]
        except TimeoutError:
            _timed_out()
            raise

    def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        _refuse_while_skipping()
        try:
            super().send_packed_command(command, check_health)  # type: ignore[no-untyped-call]
        except TimeoutError:
            _timed_out()
            raise

    def read_response(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().read_response(*args, **kwargs)
        except TimeoutError:
            _timed_out()
            raise


class TcpConnection(_SkipAfterTimeout, Connection):
    pass


class TlsConnection(_SkipAfterTimeout, SSLConnection):
    pass


class UnixConnection(_SkipAfterTimeout, UnixDomainSocketConnection):
    pass


def cache_options(url: str) -> dict[str, Any]:
    """The OPTIONS of a Redis cache at `url`: bounded timeouts and the connection class of its
    scheme."""
    scheme = url.split("://", 1)[0]
    connection_class = {"rediss": TlsConnection, "unix": UnixConnection}.get(scheme, TcpConnection)
    return {
        "socket_connect_timeout": CONNECT_TIMEOUT_SECONDS,
        "socket_timeout": ANSWER_TIMEOUT_SECONDS,
        "connection_class": connection_class,
    }
