"""Benchmark of the MCP tool server with 100,000 entries in PostgreSQL: tool calls per second
and p99 for `latest_news` and `search_news`, against gunicorn (2 uvicorn workers) serving the
news service's ASGI app, with the rate limit lifted for the run. Target: latest_news p99 < 50 ms.

Each call is one stateless Streamable HTTP POST (`tools/call`, JSON answer), sent by a fixed
number of concurrent client loops for a fixed time.

Usage: python benchmarks/news_mcp_bench.py [--entries 100000] [--seconds 8] [--concurrency 8]
Needs PostgreSQL on 127.0.0.1:5432 (role postgres).
"""

import argparse
import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from benchmarks import news_bench  # noqa: E402
from benchmarks.results import Figure, record  # noqa: E402

# The news benchmark's fill, in a database of this benchmark's own.
news_bench.DB_NAME = "news_mcp_bench"
news_bench.ENV["NEWS_DATABASE_URL"] = f"{news_bench.PG}/{news_bench.DB_NAME}"
ENV = {**news_bench.ENV, "MCP_RATE_LIMIT": "100000000/m"}
HEADERS = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}


async def load(url: str, name: str, arguments: dict, *, seconds: float, concurrency: int):
    latencies: list[float] = []
    failures = 0
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
    body["params"] = {"name": name, "arguments": arguments}
    deadline = time.monotonic() + seconds

    async def loop(client: httpx.AsyncClient) -> None:
        nonlocal failures
        while time.monotonic() < deadline:
            start = time.perf_counter()
            response = await client.post(url, json=body, headers=HEADERS)
            latencies.append((time.perf_counter() - start) * 1000)
            if response.status_code != 200 or response.json()["result"].get("isError"):
                failures += 1

    limits = httpx.Limits(max_connections=concurrency)
    async with httpx.AsyncClient(timeout=30, limits=limits) as client:
        await asyncio.gather(*(loop(client) for _ in range(concurrency)))
    latencies.sort()
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
    return len(latencies) / seconds, p99, failures


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--seconds", type=float, default=8)
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
                # Warm-up: connections, caches and the workers' imports.
                asyncio.run(load(url, name, arguments, seconds=1, concurrency=concurrency))
                rps, p99, failures = asyncio.run(
                    load(url, name, arguments, seconds=args.seconds, concurrency=concurrency)
                )
                verdict = ""
                if name == "latest_news":
                    verdict = " (ok)" if p99 < 50 else " (OVER 50 ms)"
                print(
                    f"{concurrency} clients  {name:12} {rps:8.1f} calls/s  p99 {p99:6.1f} ms"
                    f"{verdict}  errors {failures}"
                )
                record(
                    Figure(
                        f"news MCP, {args.entries:,} entries",
                        f"`{name}`, {concurrency} concurrent clients",
                        f"{rps:,.0f} calls/s, p99 {p99:.1f} ms, {failures} errors",
                        target="p99 < 50 ms" if name == "latest_news" else "",
                        met=p99 < 50 and not failures if name == "latest_news" else None,
                    )
                )
    finally:
        server.terminate()
        server.wait(timeout=15)


if __name__ == "__main__":
    main()
