"""Benchmark of the MCP tool server with 100,000 entries in PostgreSQL: tool calls per second
and p99 for `latest_news` and `search_news`, against gunicorn (2 uvicorn workers) serving the
news service's ASGI app, with the rate limit lifted for the run. Target: latest_news p99 < 50 ms.

Each call is one stateless Streamable HTTP POST (`tools/call`, JSON answer), sent by wrk
with a fixed number of connections (one call in flight on each), median of 3 runs; wrk is C
and takes little of the 2 cores the workers share with it.

Usage: python benchmarks/news_mcp_bench.py [--entries 100000] [--seconds 8] [--concurrency 8]
Needs PostgreSQL on 127.0.0.1:5432 (role postgres).
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from benchmarks import news_bench  # noqa: E402
from benchmarks.loadgen import wrk  # noqa: E402
from benchmarks.results import Figure, record  # noqa: E402

# The news benchmark's fill, in a database of this benchmark's own.
news_bench.DB_NAME = "news_mcp_bench"
news_bench.ENV["NEWS_DATABASE_URL"] = f"{news_bench.PG}/{news_bench.DB_NAME}"
ENV = {**news_bench.ENV, "MCP_RATE_LIMIT": "100000000/m"}
HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "MCP-Protocol-Version": "2025-06-18",
}


def tool_call(name: str, arguments: dict) -> bytes:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
    body["params"] = {"name": name, "arguments": arguments}
    return json.dumps(body).encode()


def check_answer(url: str, body: bytes) -> None:
    """One call by hand first: wrk counts only HTTP errors, not tool errors."""
    response = httpx.post(url, content=body, headers=HEADERS, timeout=30)
    response.raise_for_status()
    assert response.json()["result"].get("isError") is False, response.text[:500]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--seconds", type=float, default=5)
    parser.add_argument(
        "--concurrency",
        default="2,8",
        help="comma-separated numbers of concurrent clients, one measurement each",
    )
    args = parser.parse_args()

    news_bench.database_create()
    news_bench.database_fill(args.entries)
    port = news_bench.free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "news_site.asgi:application",
            "-k",
            "uvicorn_worker.UvicornWorker",
            "--workers",
            "2",
            "--bind",
            f"127.0.0.1:{port}",
            "--log-level",
            "warning",
        ],
        cwd=REPO_ROOT,
        env={**os.environ, **ENV},
    )
    try:
        for _ in range(150):
            try:
                httpx.get(url, timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.2)
        print(f"MCP tool calls, {args.entries} entries, gunicorn 2 uvicorn workers")
        for concurrency in (int(n) for n in args.concurrency.split(",")):
            for name, arguments in [
                ("latest_news", {"limit": 10}),
                ("search_news", {"query": "uppdatering iPhone", "limit": 20}),
            ]:
                body = tool_call(name, arguments)
                check_answer(url, body)
                # Warm-up, not measured: both workers load the model and the vectors.
                wrk(url, headers=HEADERS, body=body, seconds=2, connections=concurrency, runs=1)
                result = wrk(
                    url,
                    headers=HEADERS,
                    body=body,
                    seconds=args.seconds,
                    connections=concurrency,
                )
                verdict = ""
                if name == "latest_news":
                    verdict = " (ok)" if result.p99_ms < 50 else " (OVER 50 ms)"
                print(
                    f"{concurrency} clients  {name:12} {result.requests_per_second:8.1f} calls/s"
                    f"  p99 {result.p99_ms:6.1f} ms{verdict}  HTTP errors {result.non_2xx}"
                )
                record(
                    Figure(
                        f"news MCP, {args.entries:,} entries",
                        f"`{name}`, {concurrency} concurrent clients",
                        f"{result.requests_per_second:,.0f} calls/s, p99 {result.p99_ms:.1f} ms",
                        target="p99 < 50 ms" if name == "latest_news" else "",
                        met=(result.p99_ms < 50 and not result.non_2xx)
                        if name == "latest_news"
                        else None,
                    )
                )
    finally:
        server.terminate()
        server.wait(timeout=15)


if __name__ == "__main__":
    main()
