"""The Redis connections the caches use: one client and one pool per process, and a Redis that
hangs costs a process one timeout, not one per call.

Django keeps a cache object per thread and, under ASGI, per request context, and django-redis
builds a redis-py client for each of them; building one (its table of response callbacks) cost
about as much CPU as the command it then sent, and a pool per context meant a new connection per
request. So `ProcessConnectionFactory`, set through django-redis's documented CONNECTION_FACTORY
option, keeps one client with its one pool per process and configuration for every context:
redis-py's clients and pools are thread-safe, and a pool re-creates its connections after a
fork.

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
from typing import Any, ClassVar

from django_redis.pool import ConnectionFactory
from redis import ConnectionPool, Redis
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


class ProcessConnectionFactory(ConnectionFactory):
    """django-redis's connection factory, with one client, so one pool, per process and
    configuration (URL and OPTIONS)."""

    _clients: ClassVar[dict[str, Redis]] = {}
    _clients_lock = threading.Lock()

    def connect(self, url: str) -> Redis:
        identity = repr((url, sorted(self.options.items())))
        with self._clients_lock:
            client = self._clients.get(identity)
            if client is None:
                client = self._clients[identity] = super().connect(url)
        return client

    def get_or_create_connection_pool(self, params: dict[str, Any]) -> ConnectionPool:
        # A pool of its own for each client above (connect holds the lock): django-redis keeps
        # its pools by URL alone, so two configurations of one server would share their first
        # one's timeouts and connection class.
        return self.get_connection_pool(params)


def cache_options(url: str) -> dict[str, Any]:
    """The OPTIONS of a django-redis cache at `url`: one client per process, bounded timeouts
    and the connection class of its scheme."""
    scheme = url.split("://", 1)[0]
    connection_class = {"rediss": TlsConnection, "unix": UnixConnection}.get(scheme, TcpConnection)
    return {
        "CONNECTION_FACTORY": f"{__name__}.{ProcessConnectionFactory.__name__}",
        "SOCKET_CONNECT_TIMEOUT": CONNECT_TIMEOUT_SECONDS,
        "SOCKET_TIMEOUT": ANSWER_TIMEOUT_SECONDS,
        "CONNECTION_POOL_KWARGS": {"connection_class": connection_class},
    }
