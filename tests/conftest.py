"""Fixtures every test suite uses: a clean cache per test, each xdist worker's own Redis
database, quick password hashing; and helpers that start the services as deployed (gunicorn).

Tests talk to the application through real HTTP requests (tests/support/inprocess.py, or a
server the test starts), with the project's real database (SQLite or PostgreSQL, per the run)
and cache (local or Redis).
"""

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import urlsplit, urlunsplit

import django_ratelimit.core
import httpx
import pytest
from django.conf import settings as django_settings
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from django.core.cache import caches
from django.db.backends.postgresql.operations import DatabaseOperations as PostgresOperations
from django.test import override_settings
from hypothesis import settings as hypothesis_settings

import shared.ratelimit
from news_site.news.catalogues import catalogues_compile

# No per-example time limit in any generated test: the suite runs on busy shared machines, where
# one example waiting for a core says nothing about the code (what a test bounds, it bounds by
# its own readiness waits). Tests still choose their own example counts.
hypothesis_settings.register_profile("suite", deadline=None)
hypothesis_settings.load_profile("suite")

# Fixtures of every suite (tests/support/): the application in-process (`http`,
# `served_queries`), a loopback HTTP server (`local_server`), a mail relay (`smtp_sink`) and the
# news service's MCP endpoint on uvicorn (`mcp_server`).
pytest_plugins = [
    "tests.support.inprocess",
    "tests.support.localserver",
    "tests.support.smtpsink",
    "tests.support.mcp",
]

# A bound for a server that never comes up, not a budget: a working one is seen ready as soon as
# it answers. On a loaded two-core machine one uvicorn worker took 38 s to answer at all.
STARTUP_BOUND_SECONDS = 300
# The same for a command a test runs (a management command, a script, a client): it tells a hang
# from slowness. On a two-core machine at load average 23, a reindex that takes 3 s on a quiet one
# ran past 120 s.
COMMAND_BOUND_SECONDS = 900
REPO_ROOT = Path(__file__).resolve().parent.parent
# A developer's `.env` (written by `make run`) must not reach the servers the tests start.
os.environ.setdefault("ENV_FILE", "")


def pytest_configure(config: pytest.Config) -> None:
    # The news admin's Swedish catalogue is build output (.mo, not in git): compiled before any
    # test reads a translation, so a run from a fresh clone sees the texts the services show.
    catalogues_compile(locale_dirs=[REPO_ROOT / "news_site" / "locale"])


def _worker_redis_url(url: str, worker: int) -> str:
    """`url` with its database number moved up by `worker`."""
    parts = urlsplit(url)
    database = int(parts.path.strip("/") or 0) + worker
    return urlunsplit(parts._replace(path=f"/{database}"))


@pytest.fixture(scope="session", autouse=True)
def _own_redis_database() -> Iterator[None]:
    """Under pytest-xdist each worker gets its own Redis database (the one of the run plus the
    worker's number): tests flush theirs, which must not wipe another worker's counts. The
    servers tests start read the same environment."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    if worker == "0":
        yield
        return
    for name in ("REDIS_URL", "TEST_REDIS_URL"):
        if os.environ.get(name):
            os.environ[name] = _worker_redis_url(os.environ[name], int(worker))
    configured = django_settings.CACHES
    default = configured["default"]
    if "LOCATION" in default and default["LOCATION"].startswith("redis"):
        location = _worker_redis_url(default["LOCATION"], int(worker))
        with override_settings(CACHES={**configured, "default": {**default, "LOCATION": location}}):
            yield
    else:
        yield


@pytest.fixture(scope="session", autouse=True)
def _flush_by_delete() -> Iterator[None]:
    """After each transactional test pytest-django empties every table with Django's flush, on
    PostgreSQL one TRUNCATE of them all. That makes new files for each table and index (about
    70 ms); a DELETE of the few rows a test leaves takes a tenth of it and leaves the same empty
    tables. Django's foreign keys are checked at commit, so the order of the DELETEs does not
    matter. A flush that resets sequences or cascades stays Django's own."""
    truncate = PostgresOperations.sql_flush

    def sql_flush(self, style, tables, *, reset_sequences=False, allow_cascade=False):
        if reset_sequences or allow_cascade:
            return truncate(
                self, style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade
            )
        # Table names from Django's own introspection, quoted.
        return [f"DELETE FROM {self.quote_name(table)};" for table in tables]  # noqa: S608

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(PostgresOperations, "sql_flush", sql_flush)
        yield


class QuickPasswordHasher(PBKDF2PasswordHasher):
    """Production's PBKDF2 with few rounds. The tests hash hundreds of passwords (a login hashes
    one even for an unknown user), each a quarter of a CPU-second at production's million
    rounds. The rounds are part of the hash, so servers started with production's hashers
    check these passwords too."""

    iterations = 1_000


@pytest.fixture(scope="session", autouse=True)
def _quick_password_hashing() -> Iterator[None]:
    with override_settings(PASSWORD_HASHERS=["tests.conftest.QuickPasswordHasher"]):
        yield


@pytest.fixture(autouse=True)
def _clean_cache() -> Iterator[None]:
    # Rate-limit counters, cached reports and the process's own copies (tokens, rendered pages)
    # must not leak from one test into the next.
    for alias in django_settings.CACHES:
        caches[alias].clear()
    yield


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def redis_url_or_skip() -> str:
    """The Redis URL for tests that need a shared cache. In CI a missing Redis fails the run."""
    import redis

    url = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
    try:
        redis.Redis.from_url(url, socket_connect_timeout=2).ping()
    except redis.RedisError:
        if os.environ.get("CI"):
            pytest.fail(f"Redis is not reachable at {url}")
        pytest.skip(f"Redis is not reachable at {url}")
    return url


def database_url_for_subprocess(settings_db: dict) -> str:
    """A URL that points a child process at the test database this process uses."""
    if settings_db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{settings_db['NAME']}"
    user = settings_db.get("USER") or "postgres"
    host = settings_db.get("HOST") or "127.0.0.1"
    port = settings_db.get("PORT") or 5432
    return f"postgres://{user}@{host}:{port}/{settings_db['NAME']}"


class Gunicorn:
    """A real gunicorn serving one of our WSGI apps, started for a test."""

    def __init__(
        self, app: str, env: dict[str, str], workers: int = 2, worker_class: str = "sync"
    ) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                app,
                "--bind",
                f"127.0.0.1:{self.port}",
                "--workers",
                str(workers),
                "--worker-class",
                worker_class,
                "--log-level",
                "warning",
            ],
            cwd=REPO_ROOT,
            env={**os.environ, **env},
        )

    def wait_ready(self, path: str, timeout: float = STARTUP_BOUND_SECONDS) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"gunicorn exited with {self.process.returncode}")
            try:
                httpx.get(self.url + path, timeout=2)
                return
            except httpx.TransportError:
                time.sleep(0.2)
        raise RuntimeError("gunicorn did not start in time")

    def wait_serving(self, path: str = "/readyz", timeout: float = STARTUP_BOUND_SECONDS) -> None:
        """Until `path` answers 200 (wait_ready takes any answer: a server that is up)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if httpx.get(self.url + path, timeout=5).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"{path} did not answer 200 in time")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()


@contextmanager
def news_served(settings: dict[str, str], *, ready: str = "/healthz") -> Iterator[Gunicorn]:
    """The news service as deployed (its ASGI app on a uvicorn worker) on this test run's
    database, plain HTTP, with `settings` (environment values) on top; stopped on exit."""
    from django.conf import settings as django_settings

    env = {
        "NEWS_DATABASE_URL": database_url_for_subprocess(django_settings.DATABASES["default"]),
        "SECRET_KEY": "test-secret",
        "SECURE_SSL_REDIRECT": "false",
        **settings,
    }
    server = Gunicorn(
        "news_site.asgi:application", env, workers=1, worker_class="uvicorn_worker.UvicornWorker"
    )
    try:
        server.wait_ready(ready)
        yield server
    finally:
        server.stop()


@pytest.fixture
def one_window(monkeypatch) -> None:
    """The clock of django-ratelimit (which picks the window) and of our headers stands still
    at the moment the test starts: rate limits count in fixed windows, each bucket with its own
    offset, and a test that counts up to a limit must not straddle the end of its window. Only
    this process's clock: servers in other processes keep the real one."""
    now = time.time()
    clock = SimpleNamespace(time=lambda: now)
    monkeypatch.setattr(django_ratelimit.core, "time", clock)
    monkeypatch.setattr(shared.ratelimit, "time", clock)
