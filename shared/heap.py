"""A serving process's long-lived objects, out of the garbage collector's way.

CPython's cycle collector scans every tracked object of the oldest generation in each full
collection, with the GIL held. A news worker holds about 200,000 that live as long as it does
(Django, DRF, every view and serializer, the URL patterns, the tool server); measured in
process, a full collection took 140-175 ms and came about once per 1,500 pages rendered with
nothing kept, and every request of the worker waited for it (docs/api-performance.md, "The
heap frozen, the lists read as SQL"). Frozen once the application is loaded, they are never
scanned again: a collection sees only what requests leave behind.
"""

import gc

from django.urls import get_resolver


def heap_freeze() -> None:
    """Load what serving needs but Django imports on the first request (the URL patterns,
    and through them every view), collect start-up's garbage so that none of it is kept for
    good, and freeze the rest. Called once, by each service's application module."""
    get_resolver().url_patterns  # noqa: B018 (imported for its side effect)
    gc.collect()
    gc.freeze()
