"""One redis-py client, so one connection pool, per process and cache configuration
(shared/cache_connection.py): Django gives every thread (and, under ASGI, every request context)
a cache object of its own, and each of them uses the process's one client, whose connections
are reused across them."""

import threading
import uuid

import pytest
import redis
from django.core.cache import caches
from django_redis import get_redis_connection

from shared import cache as shared_cache
from tests.conftest import redis_url_or_skip
from tests.support.redis_cache import redis_cache

pytestmark = pytest.mark.every_backend

THREADS = 4
CALLS_PER_THREAD = 25


def test_every_thread_uses_the_process_s_one_client_and_its_connections(settings):
    url = redis_url_or_skip()
    # The server names each connection of this configuration, so they can be counted there.
    name = f"test-one-client-{uuid.uuid4().hex}"
    config = redis_cache(url, timeout_seconds=2)
    config["OPTIONS"]["CONNECTION_POOL_KWARGS"] = {
        **config["OPTIONS"]["CONNECTION_POOL_KWARGS"],
        "client_name": name,
    }
    settings.CACHES = {"default": config}
    start = threading.Barrier(THREADS)
    backends: list[object] = [None] * THREADS
    clients: list[object] = [None] * THREADS

    def requests_of_one_thread(index: int) -> None:
        start.wait()
        for call in range(CALLS_PER_THREAD):
            key = f"tests:one-client:{index}:{call}"
            assert shared_cache.value_keep(key, call, 30)
            assert shared_cache.value_read(key) == call
            # What Django does when a request finishes.
            caches.close_all()
        backends[index] = caches["default"]
        clients[index] = get_redis_connection("default")

    threads = [threading.Thread(target=requests_of_one_thread, args=(n,)) for n in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len({id(backend) for backend in backends}) == THREADS  # a cache object per thread
    assert len({id(client) for client in clients}) == 1  # one client for all of them
    assert clients[0] is get_redis_connection("default")
    named = [c for c in redis.Redis.from_url(url).client_list() if c["name"] == name]
    # At most one connection per thread at once, each kept open for the next call.
    assert 1 <= len(named) <= THREADS
