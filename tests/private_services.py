"""Private PostgreSQL and Redis servers for fault tests: each test may stop, restart or kill
its own instance without touching the machine's shared services."""

import contextlib
import glob
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import psycopg
import pytest
import redis

from tests.conftest import REPO_ROOT, STARTUP_BOUND_SECONDS, free_port
from tests.support.redis_cache import redis_cache


def unavailable(reason: str) -> None:
    """Skip on a developer machine; under CI a missing tool fails the run."""
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


def postgres_pass_only(settings_db: dict) -> None:
    """These tests run in the PostgreSQL pass of `make test` (services present), not on SQLite."""
    if settings_db["ENGINE"].endswith("sqlite3"):
        pytest.skip("runs in the PostgreSQL pass")


class PgCluster:
    """A throwaway PostgreSQL cluster (initdb) on a free loopback port, trust authentication.
    As root it runs as the `postgres` user (the server refuses to run as root)."""

    def __init__(self) -> None:
        binaries = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), reverse=True)
        if not binaries:
            unavailable("PostgreSQL server binaries (initdb) are not installed")
        self.bin = Path(binaries[0]).parent
        # Not under pytest's tmp_path: its parents are private to root, and the server runs as
        # the postgres user.
        self.root = Path(tempfile.mkdtemp(prefix="pgcluster-"))
        self.data = self.root / "data"
        self.port = free_port()
        self.log = self.root / "server.log"
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres", "postgres")
        self._as_server_user(
            [
                str(self.bin / "initdb"),
                *("-D", str(self.data), "-U", "postgres"),
                *("--auth=trust", "--encoding=UTF8", "--no-sync"),
            ],
            timeout=60,
        )

    def _as_server_user(self, command: list[str], timeout: float) -> None:
        prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        subprocess.run(
            prefix + command, check=True, timeout=timeout, capture_output=True, cwd=self.root
        )

    def _pg_ctl(self, action: str, *extra: str) -> None:
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._as_server_user(
            [
                str(self.bin / "pg_ctl"),
                *(action, "-D", str(self.data), "-l", str(self.log)),
                *("-w", "-t", str(STARTUP_BOUND_SECONDS), "-o", options, *extra),
            ],
            timeout=STARTUP_BOUND_SECONDS + 60,
        )

    def start(self) -> None:
        self._pg_ctl("start")

    def stop(self) -> None:
        self._pg_ctl("stop", "-m", "fast")

    def restart(self) -> None:
        # Fast: active sessions are disconnected at once, as in a failover or an upgrade.
        self._pg_ctl("restart", "-m", "fast")

    def url(self, name: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{name}"

    def create_database(self, name: str) -> str:
        with psycopg.connect(self.url("postgres"), autocommit=True) as connection:
            connection.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def destroy(self) -> None:
        with contextlib.suppress(subprocess.CalledProcessError):  # already stopped
            self._pg_ctl("stop", "-m", "immediate")
        shutil.rmtree(self.root, ignore_errors=True)


def manage(project: str, *args: str, env: dict[str, str], timeout: float = 180) -> str:
    """Run `python -m <project> <args>` against the environment given; its stdout."""
    done = subprocess.run(
        [sys.executable, "-m", project, *args],
        cwd=REPO_ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, f"{project} {args[0]} failed: {done.stderr[-2000:]}"
    return done.stdout


class RedisServer:
    """A private redis-server on a free loopback port, without persistence."""

    def __init__(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            unavailable("redis-server is not installed")
        self.binary = binary
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                self.binary,
                *("--port", str(self.port), "--bind", "127.0.0.1"),
                *("--save", "", "--appendonly", "no", "--loglevel", "warning"),
            ],
            stdout=subprocess.DEVNULL,
        )
        client = redis.Redis.from_url(self.url, socket_connect_timeout=1)
        deadline = time.monotonic() + 10
        while True:
            try:
                client.ping()
                return
            except redis.RedisError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def pause(self) -> None:
        """SIGSTOP: the server keeps its data and its connections but answers nothing (a
        partition, or a Redis that hangs); clients wait until their timeouts."""
        assert self.process is not None
        self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGCONT)

    def kill(self) -> None:
        if self.process is not None:
            self.process.send_signal(signal.SIGCONT)
            self.process.kill()
            self.process.wait(timeout=10)
            self.process = None


class PartitionProxy:
    """A TCP proxy to `port` on loopback that the test can cut: while cut, what either side
    sends is dropped, not forwarded, and the connections stay open, so clients wait for
    answers until their timeouts, as across a network partition. (A stopped server alone is not
    one: the kernel keeps what clients sent, and the server runs it when it continues.)"""

    def __init__(self, port: int) -> None:
        self.upstream = port
        self.port = free_port()
        self.cut = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", self.port))
        self._closed = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _address = self._listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.upstream))
            for source, target in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, target), daemon=True).start()

    def _pump(self, source: socket.socket, target: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := source.recv(65536):
                if not self.cut.is_set():
                    target.sendall(data)
        for end in (source, target):
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self._closed.set()
        self._listener.close()


@dataclass(frozen=True)
class Answer:
    at: float
    path: str
    status: int  # 0: no answer (transport error or timeout)
    seconds: float


@dataclass(frozen=True)
class RestartUnderLoad:
    answers: list[Answer]
    began: float
    ended: float

    def report(self) -> str:
        refused = [a for a in self.answers if a.status == 503]
        return (
            f"restart took {self.ended - self.began:.2f} s; {len(self.answers)} requests, "
            f"{len(refused)} answered 503"
            + (f" over {refused[-1].at - refused[0].at:.2f} s" if refused else "")
            + f"; slowest answer {max(a.seconds for a in self.answers):.2f} s"
        )

    def settled(self, after_seconds: float = 0.5) -> list[Answer]:
        """The answers to requests sent once the restart had been over for a moment."""
        return [a for a in self.answers if a.at > self.ended + after_seconds]


# How long restart_under_load waits for its settled answers at most: far past any restart.
SETTLE_LIMIT_SECONDS = 60.0


def restart_under_load(
    cluster: PgCluster,
    base_url: str,
    requests: list[tuple[str, dict[str, str]]],
    *,
    timeout: float,
    clients: int = 2,
    settled_answers: int = 30,
) -> RestartUnderLoad:
    """Restart `cluster` while `clients` threads keep sending `requests` (GETs) round and
    round: a second of load before, the restart, then until `settled_answers` requests sent
    half a second after it have been answered (counted, not timed: a busy machine answers
    fewer per second, and a test must not fail for that)."""
    stop = threading.Event()
    answers: list[Answer] = []

    def drive() -> None:
        with httpx.Client(base_url=base_url, timeout=timeout) as client:
            while not stop.is_set():
                for path, headers in requests:
                    started = time.monotonic()
                    try:
                        status = client.get(path, headers=headers).status_code
                    except httpx.TransportError:
                        status = 0
                    answers.append(Answer(started, path, status, time.monotonic() - started))

    drivers = [threading.Thread(target=drive) for _ in range(clients)]
    for driver in drivers:
        driver.start()
    try:
        time.sleep(1)
        began = time.monotonic()
        cluster.restart()
        ended = time.monotonic()
        deadline = ended + SETTLE_LIMIT_SECONDS
        while time.monotonic() < deadline:
            if sum(1 for a in list(answers) if a.at > ended + 0.5) >= settled_answers:
                break
            time.sleep(0.1)
    finally:
        stop.set()
        for driver in drivers:
            driver.join(timeout=timeout + 5)
    return RestartUnderLoad(answers, began, ended)


def cache_on_stopped_redis(settings) -> str:
    """Point the default cache at a private Redis that has been stopped, so that every cache
    call of the code under test fails at once (connection refused), as in a Redis outage.
    `settings` is pytest-django's fixture, which restores the cache afterwards."""
    server = RedisServer()
    server.start()
    server.kill()
    # The process's own caches (news: `process`, `pages`) stay as they are.
    settings.CACHES = {
        **settings.CACHES,
        "default": redis_cache(server.url, timeout_seconds=2),
    }
    return server.url
