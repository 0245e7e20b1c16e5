"""What the gunicorn configs of both services share (deploy/gunicorn/*.py import it).

- JSON logs for gunicorn's own lines too (worker boots, timeouts), in the format of the
  application's; gunicorn's access log stays off because the application writes its own, with
  the request id and the URL pattern.
- One directory for the workers' Prometheus metrics, so a scrape of any worker reports the sum
  of all of them (prometheus_client's multi-process mode). The master makes it before the
  first worker starts and removes it on exit; counters of workers that exit (max_requests
  recycles them) stay in it, so totals never go backwards while the master runs.

Nothing here may import prometheus_client: workers are forked from the master, and the library
chooses between per-process and multi-process storage once, when it is first imported, which
must happen after PROMETHEUS_MULTIPROC_DIR is set.
"""

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from shared.logs import logging_config

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
_made_here: list[str] = []


def gunicorn_logconfig(*, service: str) -> dict[str, Any]:
    config = logging_config(
        service=service,
        level=os.environ.get("LOG_LEVEL", "INFO"),
        log_format=os.environ.get("LOG_FORMAT", "json"),
    )
    config["loggers"].update(
        {
            "gunicorn.error": {"level": "INFO", "handlers": ["console"], "propagate": False},
            # No handler: gunicorn (and uvicorn, which reuses it) then skips its access lines.
            "gunicorn.access": {"level": "INFO", "handlers": [], "propagate": False},
        }
    )
    return config


def on_starting(server: Any) -> None:
    """A metrics directory of this master's own (several masters may share a host), or the one
    the environment names, emptied of a previous run's files."""
    directory = os.environ.get(MULTIPROC_ENV)
    if directory:
        Path(directory).mkdir(parents=True, exist_ok=True)
        for stale in Path(directory).glob("*.db"):
            stale.unlink()
    else:
        directory = tempfile.mkdtemp(prefix=f"{server.proc_name}-metrics-")
        _made_here.append(directory)
        os.environ[MULTIPROC_ENV] = directory


def child_exit(server: Any, worker: Any) -> None:
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid)


def on_exit(server: Any) -> None:
    for directory in _made_here:
        shutil.rmtree(directory, ignore_errors=True)
