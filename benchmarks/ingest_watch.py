"""Time to public for the ingest benchmark: when a pass's newest entry answers on the API.

A gunicorn worker (deploy/gunicorn/news.py) serves the benchmark's database while the pass runs
in its own process; a thread of the benchmark asks the database, every 50 ms, for the newest
relevant entry and requests it on `/api/v1/entries/:id` until it answers 200. Entries are
stored one feed after another, so once the pass's last stored entry answers, all of them do:
its first 200 after the pass's start is the pass's time to public. The web worker runs without
the embedding model (reading an entry needs none), so it takes no memory or CPU from the pass
beyond its answers.
"""

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import psycopg

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from benchmarks.news_bench import free_port  # noqa: E402

_POLL = 0.05
_NEWEST = "SELECT max(id) FROM news_entry WHERE platform_relevant"


class ApiServer:
    """One gunicorn worker on a free port for `env`'s database."""

    def __init__(self, env: dict[str, str]) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self._env = {
            **os.environ,
            **env,
            "NEWS_BIND": f"127.0.0.1:{self.port}",
            "WEB_CONCURRENCY": "1",
            "NEWS_EMBEDDING_MODEL": "off",
        }
        self._process: subprocess.Popen | None = None

    def start(self) -> "ApiServer":
        self._process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "deploy/gunicorn/news.py"],
            cwd=REPO_ROOT,
            env=self._env,
        )
        started = time.monotonic()
        while True:
            try:
                if httpx.get(f"{self.base}/healthz", timeout=5).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            # A bound for a server that never comes up; a loaded machine takes minutes.
            if self._process.poll() is not None or time.monotonic() - started > 600:
                raise RuntimeError("the API server did not come up")
            time.sleep(0.1)

    def stop(self) -> None:
        if self._process is not None:
            self._process.terminate()
            self._process.wait(timeout=30)


class PublicWatch:
    """Started with a pass: records when each newest entry first answered 200."""

    def __init__(self, server: ApiServer, database_url: str) -> None:
        self.server = server
        self.database_url = database_url
        self.started = 0.0
        self.first_public: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        with psycopg.connect(self.database_url) as conn:
            self.before = conn.execute(_NEWEST).fetchone()[0] or 0

    def start(self) -> "PublicWatch":
        self.started = time.perf_counter()
        self._thread.start()
        return self

    def finish(self) -> float | None:
        """Seconds from the start to the pass's newest entry answering (None: none new)."""
        self._stop.set()
        self._thread.join()
        with psycopg.connect(self.database_url) as conn:
            newest = conn.execute(_NEWEST).fetchone()[0] or 0
        if newest == self.before:
            return None
        if newest not in self.first_public:
            # Stored in the pass's last moments: it counts when it answers now.
            if not self._answers(newest):
                raise RuntimeError(f"entry {newest} does not answer on the API")
            self.first_public[newest] = time.perf_counter()
        return self.first_public[newest] - self.started

    def _answers(self, entry_id: int) -> bool:
        answer = httpx.get(f"{self.server.base}/api/v1/entries/{entry_id}", timeout=10)
        return answer.status_code == 200 and answer.json()["data"]["id"] == entry_id

    def _run(self) -> None:
        with (
            psycopg.connect(self.database_url, autocommit=True) as conn,
            httpx.Client(timeout=10) as client,
        ):
            while not self._stop.wait(_POLL):
                newest = conn.execute(_NEWEST).fetchone()[0] or 0
                if newest == self.before or newest in self.first_public:
                    continue
                answer = client.get(f"{self.server.base}/api/v1/entries/{newest}")
                if answer.status_code == 200 and answer.json()["data"]["id"] == newest:
                    self.first_public[newest] = time.perf_counter()
