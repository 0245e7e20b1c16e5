"""Benchmark of /api/v1 with 100,000 entries in PostgreSQL, against the legacy /entries.json.

Measures requests/second and p99 (wrk, median of 3 runs) of `GET /api/v1/entries`,
`GET /api/v1/entries/follows` (Bearer, 10 followed sources), and `GET /api/v1/entries/search`
in keyword and in semantic mode (the search rate limit lifted; 2 connections, one per
worker, so that p99 is the search and not the queue). The lists and keyword search run on 2
sync workers, where Django answers every request (no per-process response cache in front, as
for legacy); semantic search on gunicorn as deployed (deploy/gunicorn/news.py, 2 uvicorn
workers that load the model and the vectors before they serve), then the resident memory of
its largest worker.
Targets: list endpoints within 2x of /entries.json; search p99 under 100 ms; worker RSS under
600 MB.

The entries are news_bench.py's rows, whose texts barely differ. Their stored vectors are the
benchmark query's embedding plus random noise (so semantic search has hits above its score
floor): search cost depends on the number of vectors, not on their values, and embedding
100,000 rows on two cores would take minutes. The query itself is embedded by the real model
on every request.

Usage: python benchmarks/news_api_bench.py [--entries 100000] [--seconds 8]
Needs PostgreSQL on 127.0.0.1:5432 (role postgres) and the `semantic` extra.
"""

import argparse
import os
import subprocess
import sys
from pathlib import Path

import httpx

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from benchmarks import news_bench  # noqa: E402
from benchmarks.loadgen import LoadResult, ensure_wrk, wrk  # noqa: E402
from benchmarks.results import Figure, record  # noqa: E402

news_bench.DB_NAME = "news_api_bench"
news_bench.ENV["NEWS_DATABASE_URL"] = f"{news_bench.PG}/{news_bench.DB_NAME}"
ENV = {**news_bench.ENV, "NEWS_SEARCH_RATE_LIMIT": f"{10**9}/m"}
# All entries share most words; the number makes the query as selective as a real one.
SEARCH_QUERY = "uppdatering nummer 4711"


def fixtures() -> str:
    """A Bearer token following 10 sources, and a stored vector for every relevant entry."""
    import numpy as np

    from news_site.accounts.models import Follow, Provider
    from news_site.accounts.services import account_for_identity, token_issue
    from news_site.news.models import Entry, Feed
    from news_site.search.embeddings import model_name, texts_embed
    from news_site.search.models import EntryEmbedding

    account = account_for_identity(
        provider=Provider.EMAIL, subject="bench@example.se", email="bench@example.se"
    )
    Follow.objects.bulk_create(
        Follow(account=account, feed=feed) for feed in Feed.objects.order_by("id")[:10]
    )
    raw, _token = token_issue(account=account)
    rng = np.random.default_rng(7)
    query = texts_embed([SEARCH_QUERY])[0]
    ids = list(Entry.objects.filter(platform_relevant=True).values_list("id", flat=True))
    name = model_name()
    for start in range(0, len(ids), 5000):
        chunk = ids[start : start + 5000]
        vectors = rng.standard_normal((len(chunk), 384)).astype(np.float32) * 0.05 + query
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        EntryEmbedding.objects.bulk_create(
            EntryEmbedding(entry_id=entry_id, model_name=name, vector=vector.tobytes())
            for entry_id, vector in zip(chunk, vectors, strict=True)
        )
    return raw


def gunicorn(port: int, *, deployed: bool, extra_env: dict[str, str]) -> subprocess.Popen:
    """2 workers: as deployed (deploy/gunicorn/news.py: uvicorn workers that load the model and
    the vectors before they serve, each running them on one thread), or plain sync workers,
    whose Django answers every request itself (no per-process response cache in front)."""
    # gunicorn reads its number of workers from WEB_CONCURRENCY.
    command = ["-c", "deploy/gunicorn/news.py"] if deployed else ["news_site.wsgi"]
    return subprocess.Popen(
        [sys.executable, "-m", "gunicorn", *command, "--bind", f"127.0.0.1:{port}"],
        cwd=REPO_ROOT,
        env={**os.environ, **ENV, "WEB_CONCURRENCY": "2", **extra_env},
    )


def worker_rss_mb(master: subprocess.Popen) -> float:
    children = subprocess.run(
        ["ps", "--ppid", str(master.pid), "-o", "rss="], capture_output=True, text=True
    ).stdout.split()
    return max(int(kb) for kb in children) / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--search-connections", type=int, default=2)
    args = parser.parse_args()

    ensure_wrk()
    print(f"filling {news_bench.DB_NAME} with {args.entries} entries ...", flush=True)
    news_bench.database_create()
    news_bench.database_fill(args.entries)
    token = fixtures()
    print("measuring ...", flush=True)
    auth = {"Authorization": f"Bearer {token}"}
    search = f"/api/v1/entries/search?q={SEARCH_QUERY.replace(' ', '+')}&limit=20"

    results: dict[str, LoadResult] = {}
    # The lists and keyword search on sync workers (the views' own cost, as legacy's), then
    # semantic search and the memory as deployed.
    port = news_bench.free_port()
    app = gunicorn(port, deployed=False, extra_env={"NEWS_EMBEDDING_MODEL": "off"})
    url = f"http://127.0.0.1:{port}"
    try:
        news_bench.wait_for(url + "/entries.json", app)
        assert httpx.get(url + search, timeout=120).json()["meta"]["mode"] == "keyword"
        for label, path, headers in (
            ("legacy /entries.json", "/entries.json", None),
            ("/api/v1/entries", "/api/v1/entries", None),
            ("/api/v1/entries/follows", "/api/v1/entries/follows", auth),
            ("/api/v1/entries/search (keyword)", search, None),
        ):
            # One request in flight per worker for search: with more, p99 measures the queue.
            connections = args.search_connections if "search" in label else args.connections
            results[label] = wrk(
                url + path, headers=headers, seconds=args.seconds, connections=connections
            )
    finally:
        app.terminate()
        app.wait(timeout=20)

    port = news_bench.free_port()
    app = gunicorn(port, deployed=True, extra_env={})
    url = f"http://127.0.0.1:{port}"
    try:
        news_bench.wait_for(url + "/entries.json", app)
        assert httpx.get(url + search, timeout=120).json()["meta"]["mode"] == "semantic"
        results["/api/v1/entries/search (semantic)"] = wrk(
            url + search, seconds=args.seconds, connections=args.search_connections
        )
        rss_mb = worker_rss_mb(app)
    finally:
        app.terminate()
        app.wait(timeout=20)

    legacy = results["legacy /entries.json"].requests_per_second
    ok = rss_mb < 600
    print()
    print("| endpoint | req/s | p99 | target | ok |")
    print("|---|---|---|---|---|")
    for label, result in results.items():
        if label.startswith("legacy"):
            target, passed = "baseline", True
        elif "search" in label:
            target, passed = "p99 < 100 ms", result.p99_ms < 100
        else:
            target = ">= 50 % of legacy req/s"
            passed = result.requests_per_second >= legacy / 2
        passed = passed and not result.non_2xx
        ok = ok and passed
        share = result.requests_per_second / legacy
        record(
            Figure(
                f"news /api/v1, {args.entries:,} entries",
                f"`{label}`",
                f"{result.requests_per_second:,.0f} req/s, p99 {result.p99_ms:.1f} ms",
                ratio="" if "search" in label else f"{share:.0%} of legacy",
                target=target,
                met=passed,
            )
        )
        print(
            f"| `{label}` | {result.requests_per_second:,.0f} | {result.p99_ms:.1f} ms "
            f"| {target} | {'yes' if passed else 'NO'} |"
        )
    verdict = "yes" if rss_mb < 600 else "NO"
    print(
        f"| RSS of the largest worker after the load | {rss_mb:.0f} MB | | < 600 MB | {verdict} |"
    )
    record(
        Figure(
            f"news /api/v1, {args.entries:,} entries",
            "RSS of the largest worker after the load, embedding model and vectors loaded",
            f"{rss_mb:.0f} MB",
            target="< 600 MB",
            met=rss_mb < 600,
        )
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
