"""Fetching many sources at once: a bounded pool of threads, at most a few requests in flight
per host, results handed back on the caller's thread as they arrive.

Real sources answer in 100 ms to several seconds; fetched one after another, a run costs the sum
of their latencies and one slow source delays all the others. In a pool the fetch phase costs
about its slowest source. Politeness: one site never sees more than `per_host` of our requests
at once, however many of its feeds are due; a host whose slots are taken waits without holding
a thread, so the other hosts' fetches go on. Only the network wait runs on the pool's threads:
the caller stores each result on its own thread (one database connection, in order of
arrival), so a fast source is stored while a slow one is still being read.
"""

import functools
import threading
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from queue import SimpleQueue
from typing import Generic, TypeVar
from urllib.parse import urlsplit

from news_site.news.fetching import Fetcher
from shared.fetch import FetchError, FetchResult

K = TypeVar("K")


class FetchJob(Generic[K]):
    """One request: `key` comes back with its outcome (the caller's handle, a feed)."""

    __slots__ = ("headers", "key", "url")

    def __init__(self, key: K, url: str, headers: dict[str, str]) -> None:
        self.key = key
        self.url = url
        self.headers = headers


def host_of(url: str) -> str:
    """The politeness key: the host name, whatever the port or scheme."""
    return (urlsplit(url).hostname or "").lower()


def fetch_all(
    jobs: Iterable[FetchJob[K]], *, fetcher: Fetcher, workers: int, per_host: int
) -> Iterator[tuple[K, FetchResult | FetchError]]:
    """Each job's key with its response or FetchError, in order of completion. Any other
    exception of the fetcher is raised here, as it would be from a direct call. Closing the
    iterator early cancels the fetches not started yet."""
    waiting: dict[str, deque[FetchJob[K]]] = {}
    for job in jobs:
        waiting.setdefault(host_of(job.url), deque()).append(job)
    total = sum(len(queue) for queue in waiting.values())
    if not total:
        return
    in_flight: dict[str, int] = dict.fromkeys(waiting, 0)
    running = [0]
    workers = max(1, workers)
    per_host = max(1, per_host)
    # Reentrant: a fetch that is done before its callback is added runs `done` at once, on
    # the thread that submitted it, inside fill().
    lock = threading.RLock()
    finished: SimpleQueue[tuple[FetchJob[K], Future[FetchResult]]] = SimpleQueue()
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="feed-fetch")

    def fill() -> None:
        # Round robin over the hosts with work and a free slot, so a host with many feeds
        # does not take every thread while the others wait. Called under `lock`.
        while running[0] < workers:
            ready = [h for h, q in waiting.items() if q and in_flight[h] < per_host]
            if not ready:
                return
            for host in ready:
                if running[0] >= workers:
                    return
                # A nested fill() (see `lock`) may have taken this host's work or slots.
                if not waiting[host] or in_flight[host] >= per_host:
                    continue
                job = waiting[host].popleft()
                in_flight[host] += 1
                running[0] += 1
                future = pool.submit(fetcher, job.url, headers=job.headers)
                future.add_done_callback(functools.partial(done, job, host))

    def done(job: FetchJob[K], host: str, future: Future[FetchResult]) -> None:
        # On the pool's thread: the next request goes out at once, whatever the caller is
        # doing (storing a large document takes a while; the network must not wait for it).
        with lock:
            in_flight[host] -= 1
            running[0] -= 1
            if not future.cancelled():
                fill()
        finished.put((job, future))

    try:
        with lock:
            fill()
        for _ in range(total):
            job, future = finished.get()
            try:
                outcome: FetchResult | FetchError = future.result()
            except FetchError as exc:
                outcome = exc
            yield job.key, outcome
    finally:
        with lock:
            for queue in waiting.values():
                queue.clear()
        pool.shutdown(wait=False, cancel_futures=True)
