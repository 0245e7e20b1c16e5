"""A web worker's semantic search made ready before it serves: gunicorn calls this in
`post_worker_init` (deploy/gunicorn/news.py) and /readyz reports it, so no request pays for
the model load."""

import logging
import threading

from news_site.search.embeddings import (
    embeddings_available,
    embeddings_enabled,
    texts_embed,
    threads_in_use,
    web_worker_threads,
)

logger = logging.getLogger(__name__)

_prepare_lock = threading.Lock()
_prepared: list[bool] = []


def web_worker_prepare() -> bool:
    """Everything a web worker's first search would otherwise wait for: the model (on one
    thread), a first pass through it (ONNX Runtime sets up its buffers on the first call), and
    the vector index. A no-op once done. False without semantic search."""
    if not embeddings_enabled():
        return False
    with _prepare_lock:
        web_worker_threads()
        if not embeddings_available():
            return False
        if not _prepared:
            # Imported here: a process that never searches (an `ingest` run) does not need
            # the index.
            from news_site.search.vector_index import INDEX

            texts_embed(["warm-up"])
            INDEX.refresh()
            _prepared.append(True)
            logger.info(
                "semantic search ready: model loaded, %d vectors indexed, "
                "model on %d thread(s), BLAS on %d",
                len(INDEX),
                *threads_in_use(),
            )
    return True
