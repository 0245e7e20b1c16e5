"""`make run-prod` (scripts/run_prod.sh) as the tests run it: both services through nginx over
TLS from the shipped configs, with their own ports, databases (created by the script, dropped
afterwards), Redis database and folder for nginx's files. It needs PostgreSQL, so it runs in the
PostgreSQL pass of `make test`; a missing nginx, openssl or PostgreSQL fails the run under CI.
"""

import os
import shutil
import signal
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import psycopg
import pytest
from psycopg import sql

from tests.conftest import REPO_ROOT, free_port, redis_url_or_skip

# A bound for a stack that never comes up, not a budget: a working stack is seen ready as soon
# as both services answer. Each news worker loads the embedding model and the vector index
# before it accepts connections, which took over 70 s while CI ran both backends' suites and
# the MCP conformance suite beside it on two cores, and over 300 s (its demo data still loading)
# under a load of 20 (eight sessions' suites side by side).
STARTUP_SECONDS = 900
STOP_SECONDS = 30


def _missing(what: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{what} (.ci/run provides it)")
    pytest.skip(what)


def _postgres_server() -> str:
    url = os.environ.get("COMPLIANCE_DATABASE_URL", "")
    if not url.startswith("postgres"):
        pytest.skip("run-prod needs PostgreSQL: it runs in the PostgreSQL pass")
    server = url.rsplit("/", 1)[0]
    try:
        psycopg.connect(f"{server}/postgres", connect_timeout=3).close()
    except psycopg.Error:
        _missing(f"PostgreSQL is not reachable at {server}")
    return server


def descendants(root: int) -> set[int]:
    """Every live process under `root` (from /proc: the script's children and theirs)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = set(), [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@dataclass
class Stack:
    process: subprocess.Popen
    log: Path
    run_dir: Path
    ports: dict[str, int]
    # The PostgreSQL server (its URL without a database) and the stack's two databases.
    server: str
    databases: list[str]

    def url(self, site: str, path: str) -> str:
        return f"https://127.0.0.1:{self.ports[site]}{path}"

    def output(self) -> str:
        return self.log.read_text(errors="replace")


@contextmanager
def run_prod_stack(tmp_path: Path, extra_env: dict[str, str] | None = None) -> Iterator[Stack]:
    """scripts/run_prod.sh on free ports with databases of its own (dropped afterwards);
    `extra_env` on top of the environment it is given."""
    for program in ("nginx", "openssl"):
        if not (shutil.which(program) or Path(f"/usr/sbin/{program}").exists()):
            _missing(f"{program} is not installed")
    server = _postgres_server()
    redis_url = redis_url_or_skip()
    suffix = uuid.uuid4().hex[:8]
    databases = [f"runprod_news_{suffix}", f"runprod_compliance_{suffix}"]
    sites = ("news", "compliance", "news_http", "compliance_http", "news_app", "compliance_app")
    ports = {name: free_port() for name in sites}
    # Under the checkout, not the test's private temp folder: nginx's workers run as an
    # unprivileged user when the tests run as root, and write the cache here.
    run_dir = REPO_ROOT / "var" / f"run-prod-test-{suffix}"
    log = tmp_path / "run_prod.log"
    env = {
        **os.environ,
        "PG_URL": server,
        "RUN_PROD_NEWS_DB": databases[0],
        "RUN_PROD_COMPLIANCE_DB": databases[1],
        "RUN_PROD_REDIS_URL": redis_url,
        "RUN_PROD_NEWS_HTTPS_PORT": str(ports["news"]),
        "RUN_PROD_COMPLIANCE_HTTPS_PORT": str(ports["compliance"]),
        "RUN_PROD_NEWS_HTTP_PORT": str(ports["news_http"]),
        "RUN_PROD_COMPLIANCE_HTTP_PORT": str(ports["compliance_http"]),
        "RUN_PROD_NEWS_APP_PORT": str(ports["news_app"]),
        "RUN_PROD_COMPLIANCE_APP_PORT": str(ports["compliance_app"]),
        "RUN_PROD_DIR": str(run_dir),
        # One worker each and no embedding model keep the start-up short; the rest is as
        # shipped.
        "WEB_CONCURRENCY": "1",
        "NEWS_EMBEDDING_MODEL": "off",
        **(extra_env or {}),
    }
    with log.open("wb") as sink:
        # A session of its own, so that Ctrl-C can be sent to its process group as a terminal
        # would.
        process = subprocess.Popen(
            ["bash", "scripts/run_prod.sh"],
            cwd=REPO_ROOT,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        yield Stack(process, log, run_dir, ports, server, databases)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        shutil.rmtree(run_dir, ignore_errors=True)
        with psycopg.connect(f"{server}/postgres", autocommit=True) as connection:
            for name in databases:
                connection.execute(
                    sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
                )


def wait_ready(stack: Stack, client: httpx.Client) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    pending = {"news", "compliance"}
    while pending and time.monotonic() < deadline:
        if stack.process.poll() is not None:
            pytest.fail(f"run_prod.sh exited with {stack.process.returncode}:\n{stack.output()}")
        for site in list(pending):
            try:
                if client.get(stack.url(site, "/healthz")).status_code == 200:
                    pending.discard(site)
            except httpx.TransportError:
                pass
        time.sleep(0.5)
    assert not pending, f"{pending} not ready in {STARTUP_SECONDS} s:\n{stack.output()[-3000:]}"
