"""Burst benchmark: 500 concurrent clients for 30 s through the deployed stack (`make run-prod`:
nginx with TLS, gunicorn, PostgreSQL, Redis) on /entries.json, /api/v1/entries and
/api/v1/compliance/changes at once (wrk, 167 connections on each).

Two rounds, each on a fresh stack:
- `one address`: every client from one address, nginx's per-address limits on (an abusive
  client, or a crowd behind one NAT): what the edge turns away.
- `many addresses`: nginx's per-address limits left out (RUN_PROD_EDGE_LIMITS=off), standing in
  for 500 clients from 500 addresses, each within its limits: what the application sheds
  (the per-worker bound, the database pool, the compliance upstream's max_conns).

Reported per round: the share of 200/429/503 (and of anything else), the p99 of served (200)
requests from nginx's access logs ($request_time), the peak of PostgreSQL connections of the
stack's databases against the budget of docs/operators-capacity.md, the time until every URL
answers 200 again after the burst (target < 2 s), and the growth of each gunicorn worker's
resident memory from before to after (target < 20 MB). The machine is shared; figures are one
run's. Run: `.venv/bin/python benchmarks/burst_bench.py [--seconds 30] [--connections 500]`.
"""

import argparse
import os
import re
import shutil
import signal
import ssl
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

import httpx
import psycopg
from psycopg import sql

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from benchmarks.loadgen import ensure_wrk  # noqa: E402
from benchmarks.processes import cmdline, descendants, parent, rss_mb  # noqa: E402
from benchmarks.results import Figure, record  # noqa: E402

PG = "postgres://postgres@127.0.0.1:5432"
REDIS = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/13")
# The budget of docs/operators-capacity.md for this stack: gunicorn's default worker counts on
# this machine (news one per core with 8 connections each, compliance two per core with 2
# each) and the news task worker (4).
CORES = os.cpu_count() or 1
BUDGET = CORES * 8 + 2 * CORES * 2 + 4
RECOVERY_TARGET_SECONDS = 2.0
RSS_TARGET_MB = 20.0

# Counts the status of every answer in each wrk thread and prints them when done.
WRK_SCRIPT = """
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) counts = {} end
function response(status, headers, body) counts[status] = (counts[status] or 0) + 1 end
function done(summary, latency, requests)
  for _, thread in ipairs(threads) do
    for status, n in pairs(thread:get("counts")) do
      io.write(string.format("status %d %d\\n", status, n))
    end
  end
end
"""
_REQUEST_TIME = re.compile(r'" (\d{3}) .* request_time=([0-9.]+)')


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class RunProd:
    """scripts/run_prod.sh on free ports, its own databases and folder."""

    def __init__(self, edge_limits: bool) -> None:
        suffix = uuid.uuid4().hex[:8]
        # Named after BENCH_NEWS_DB when set, so that a run on a shared server is known as its own.
        owner = os.environ.get("BENCH_NEWS_DB", "burst")
        self.databases = [f"{owner}_news_{suffix}", f"{owner}_compliance_{suffix}"]
        self.ports = {
            name: free_port()
            for name in ("news", "compliance", "news_http", "compliance_http", "news_app", "c_app")
        }
        self.run_dir = REPO_ROOT / "var" / f"burst-bench-{suffix}"
        # Closed (and removed) by stop().
        self.log = tempfile.NamedTemporaryFile(prefix="burst-run-prod-", suffix=".log")  # noqa: SIM115
        env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
        env.update(
            PG_URL=PG,
            RUN_PROD_NEWS_DB=self.databases[0],
            RUN_PROD_COMPLIANCE_DB=self.databases[1],
            RUN_PROD_REDIS_URL=REDIS,
            RUN_PROD_NEWS_HTTPS_PORT=str(self.ports["news"]),
            RUN_PROD_COMPLIANCE_HTTPS_PORT=str(self.ports["compliance"]),
            RUN_PROD_NEWS_HTTP_PORT=str(self.ports["news_http"]),
            RUN_PROD_COMPLIANCE_HTTP_PORT=str(self.ports["compliance_http"]),
            RUN_PROD_NEWS_APP_PORT=str(self.ports["news_app"]),
            RUN_PROD_COMPLIANCE_APP_PORT=str(self.ports["c_app"]),
            RUN_PROD_DIR=str(self.run_dir),
            RUN_PROD_EDGE_LIMITS="on" if edge_limits else "off",
            # Semantic search is not on these paths; its model would only slow the start.
            NEWS_EMBEDDING_MODEL="off",
            LOG_LEVEL="WARNING",
        )
        env.setdefault("SECRET_KEY", "burst-benchmark-secret-key")
        self.env = env
        self.process = subprocess.Popen(
            ["bash", "scripts/run_prod.sh"],
            cwd=REPO_ROOT,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def url(self, site: str, path: str) -> str:
        return f"https://127.0.0.1:{self.ports[site]}{path}"

    def wait_ready(self, timeout: float = 180) -> None:
        deadline = time.monotonic() + timeout
        with httpx.Client(transport=httpx.HTTPTransport(verify=False), timeout=5) as client:
            pending = {"news", "compliance"}
            while pending and time.monotonic() < deadline:
                if self.process.poll() is not None:
                    raise RuntimeError(Path(self.log.name).read_text()[-3000:])
                for site in list(pending):
                    try:
                        if client.get(self.url(site, "/healthz")).status_code == 200:
                            pending.discard(site)
                    except httpx.TransportError:
                        pass
                time.sleep(0.5)
        if pending:
            raise RuntimeError(f"{pending} not ready: {Path(self.log.name).read_text()[-3000:]}")

    def api_key(self) -> str:
        created = subprocess.run(
            [
                *(sys.executable, "-m", "compliance_site", "create_api_key"),
                *("--name", "burst-bench", "--rate-limit-per-minute", "10000000"),
            ],
            cwd=REPO_ROOT,
            env={**self.env, "COMPLIANCE_DATABASE_URL": f"{PG}/{self.databases[1]}"},
            check=True,
            capture_output=True,
            text=True,
        )
        return created.stdout.strip().splitlines()[-1]

    def workers(self) -> dict[int, str]:
        """pid -> command of every gunicorn worker (children of the gunicorn masters)."""
        found = {}
        for pid in descendants(self.process.pid):
            command = cmdline(pid)
            if "gunicorn" in command and parent(pid) and "gunicorn" in cmdline(parent(pid)):
                found[pid] = "news" if "news.py" in command else "compliance"
        return found

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGINT)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        shutil.rmtree(self.run_dir, ignore_errors=True)
        with psycopg.connect(f"{PG}/postgres", autocommit=True) as connection:
            for name in self.databases:
                connection.execute(
                    sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
                )
        self.log.close()


class ConnectionWatch(threading.Thread):
    def __init__(self, databases: list[str]) -> None:
        super().__init__(daemon=True)
        self.databases = databases
        self.peak = 0
        self.stopped = threading.Event()

    def run(self) -> None:
        query = "SELECT count(*) FROM pg_stat_activity WHERE datname = ANY(%s)"
        with psycopg.connect(f"{PG}/postgres", autocommit=True) as connection:
            while not self.stopped.is_set():
                (count,) = connection.execute(query, [self.databases]).fetchone()
                self.peak = max(self.peak, count)
                time.sleep(0.05)


def wrk_scripted(script_text: str, arguments: list[str]) -> str:
    """wrk's output for `arguments` (options, URL, script arguments) with the Lua script."""
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(script_text)
    try:
        return subprocess.run(
            [ensure_wrk(), "-s", script.name, *arguments],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    finally:
        os.unlink(script.name)


def status_counts(output: str) -> Counter:
    """The answers per status the script printed; socket errors count as status 0."""
    counts: Counter = Counter()
    for status, n in re.findall(r"^status (\d+) (\d+)$", output, re.MULTILINE):
        counts[int(status)] += int(n)
    errors = re.search(
        r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", output
    )
    if errors:
        counts[0] += sum(int(n) for n in errors.groups())
    return counts


def wrk_burst(url: str, connections: int, seconds: int, headers: dict[str, str]) -> Counter:
    header_args = [a for name, value in headers.items() for a in ("-H", f"{name}: {value}")]
    output = wrk_scripted(
        WRK_SCRIPT,
        ["-t2", f"-c{connections}", f"-d{seconds}s", "--timeout", "10s", *header_args, url],
    )
    return status_counts(output)


def recovery_seconds(stack: RunProd, key: str, trust: ssl.SSLContext) -> float:
    """From the end of the burst until every URL (pages nginx has not kept) answers 200."""
    started = time.monotonic()
    pending = {
        ("news", "/entries.json?recovery=1"),
        ("news", "/api/v1/entries?per_page=3&recovery=1"),
        ("compliance", "/api/v1/compliance/changes?limit=3"),
    }
    keyed = {"Authorization": f"Bearer {key}"}
    with httpx.Client(verify=trust, timeout=10) as client:
        while pending and time.monotonic() - started < 60:
            for site, path in list(pending):
                headers = keyed if site == "compliance" else {}
                if client.get(stack.url(site, path), headers=headers).status_code == 200:
                    pending.discard((site, path))
            if pending:
                time.sleep(0.02)
    return time.monotonic() - started


def recovery_figure(label: str, recovery: float) -> Figure:
    return Figure(
        label,
        "time to full recovery",
        f"{recovery:.2f} s",
        target=f"< {RECOVERY_TARGET_SECONDS:.0f} s",
        met=recovery < RECOVERY_TARGET_SECONDS,
    )


def served_p99_ms(stack: RunProd) -> dict[str, float]:
    """Per service, the p99 of nginx's $request_time over the answers with status 200 (nginx's
    cache hits included, which is what clients of the news service mostly get)."""
    figures = {}
    for service in ("news", "compliance"):
        path = stack.run_dir / f"{service}.access.log"
        times = []
        if path.exists():
            for line in path.read_text(errors="replace").splitlines():
                match = _REQUEST_TIME.search(line)
                if match and match[1] == "200":
                    times.append(float(match[2]) * 1000)
        figures[service] = statistics.quantiles(times, n=100)[98] if len(times) > 1 else 0.0
    return figures


def round_(name: str, edge_limits: bool, seconds: int, connections: int) -> list[Figure]:
    print(f"\n## {name}: starting the stack", flush=True)
    stack = RunProd(edge_limits)
    try:
        stack.wait_ready()
        key = stack.api_key()
        trust = ssl.create_default_context(cafile=str(stack.run_dir / "localhost.pem"))
        # Warm each worker once, then note its memory.
        with httpx.Client(verify=trust, timeout=10) as client:
            for _ in range(20):
                client.get(stack.url("news", "/entries.json"))
                client.get(stack.url("news", "/api/v1/entries"))
                client.get(
                    stack.url("compliance", "/api/v1/compliance/changes"),
                    headers={"Authorization": f"Bearer {key}"},
                )
        for log in ("news.access.log", "compliance.access.log"):
            (stack.run_dir / log).write_text("")
        before = {pid: rss_mb(pid) for pid in stack.workers()}
        watch = ConnectionWatch(stack.databases)
        watch.start()
        per_url = connections // 3
        jobs = [
            (stack.url("news", "/entries.json"), {}),
            (stack.url("news", "/api/v1/entries"), {}),
            (
                stack.url("compliance", "/api/v1/compliance/changes"),
                {"Authorization": f"Bearer {key}"},
            ),
        ]
        results: list[Counter] = [Counter() for _ in jobs]

        def run(index: int) -> None:
            url, headers = jobs[index]
            results[index] = wrk_burst(url, per_url, seconds, headers)

        threads = [threading.Thread(target=run, args=(i,)) for i in range(len(jobs))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        recovery = recovery_seconds(stack, key, trust)
        watch.stopped.set()
        watch.join(timeout=5)
        after = {pid: rss_mb(pid) for pid in stack.workers()}
        p99 = served_p99_ms(stack)
    finally:
        stack.stop()

    total: Counter = sum(results, Counter())
    answers = sum(total.values()) or 1
    share = {status: 100 * total[status] / answers for status in (200, 429, 503)}
    other = 100 - sum(share.values())
    growth = [
        after[pid] - before[pid]
        for pid in before
        if before[pid] is not None and after.get(pid) is not None
    ]
    max_growth = max(growth) if growth else float("nan")
    for (url, _), counts in zip(jobs, results, strict=True):
        print(f"{url}: {dict(sorted(counts.items()))}")
    print(
        f"{name}: {answers} answers in {seconds} s; 200 {share[200]:.1f}%, 429 {share[429]:.1f}%, "
        f"503 {share[503]:.1f}%, other {other:.1f}%; served p99 news {p99['news']:.1f} ms, "
        f"compliance {p99['compliance']:.1f} ms; peak connections "
        f"{watch.peak}/{BUDGET}; recovery {recovery:.2f} s; worker RSS growth "
        f"{max_growth:.1f} MB (workers alive throughout: {len(growth)})",
        flush=True,
    )
    label = f"burst_bench ({name})"
    return [
        Figure(
            label,
            f"answers in {seconds} s at {connections} connections: 200 / 429 / 503 / other",
            f"{share[200]:.1f}% / {share[429]:.1f}% / {share[503]:.1f}% / {other:.1f}%",
            target="other = 0%",
            met=total[0] == 0 and other < 0.05,
        ),
        Figure(
            label,
            "p99 of served (200) requests: news / compliance",
            f"{p99['news']:.1f} ms / {p99['compliance']:.1f} ms",
        ),
        Figure(
            label,
            "peak PostgreSQL connections",
            str(watch.peak),
            ratio=f"{watch.peak / BUDGET:.2f} of budget {BUDGET}",
            target=f"<= {BUDGET}",
            met=watch.peak <= BUDGET,
        ),
        recovery_figure(label, recovery),
        Figure(
            label,
            "worker RSS growth (max over workers)",
            f"{max_growth:.1f} MB",
            target=f"< {RSS_TARGET_MB:.0f} MB",
            met=bool(growth) and max_growth < RSS_TARGET_MB,
        ),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=30)
    parser.add_argument("--connections", type=int, default=500)
    args = parser.parse_args()
    figures = round_("one address", True, args.seconds, args.connections)
    figures += round_("many addresses", False, args.seconds, args.connections)
    record(*figures)
    return 0 if all(f.met is not False for f in figures) else 1


if __name__ == "__main__":
    sys.exit(main())
