"""Benchmark of the personalised /api/v1 lists (a Bearer token, so no response cache answers),
through the deploy stack, beside tt-rss's getHeadlines on the same entries.

For the 2,200-entry set (40 sources, the size of the issue's measurement) and for 100,000
entries in PostgreSQL: `GET /api/v1/entries?per_page=50`, `GET /api/v1/entries/follows?per_page=50`
(10 followed sources) and `GET /api/v1/feeds`, each with `Authorization: Bearer`, through nginx
(deploy/nginx/news.conf, TLS) to gunicorn (deploy/gunicorn/news.py: uvicorn workers, 2 of
them), Redis as the cache; wrk at 8 connections for 20 s. Then the resident memory of the
largest worker after that load. tt-rss (benchmarks/ttrss.py, when installed) gets the same
entries, titles, links and excerpts, written into its own tables, and answers getHeadlines
(limit 50, excerpts, a logged-in session) under the same wrk load.

Targets: each endpoint >= 3x tt-rss's requests/s and p99 < 30 ms; at 100,000 entries at least
1/1.5 of its 2,200-entry requests/s; worker RSS < 600 MB.

Usage: python benchmarks/news_personal_bench.py [--sizes 2200 100000] [--seconds 20]
Needs PostgreSQL on 127.0.0.1:5432, Redis on 127.0.0.1:6379 (or BENCH_REDIS_URL), nginx, and
wrk; BENCH_NEWS_DB names the database it (re)creates (news_personal_bench unless set).
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import psycopg

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from benchmarks import news_bench  # noqa: E402
from benchmarks.loadgen import LoadResult, ensure_wrk, wrk  # noqa: E402
from benchmarks.results import Figure, record  # noqa: E402
from benchmarks.ttrss import LOGIN, TtRss  # noqa: E402

news_bench.DB_NAME = os.environ.get("BENCH_NEWS_DB", "news_personal_bench")
news_bench.ENV["NEWS_DATABASE_URL"] = f"{news_bench.PG}/{news_bench.DB_NAME}"
REDIS_URL = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/8")
ENV = {
    **news_bench.ENV,
    "REDIS_URL": REDIS_URL,
    "WEB_CONCURRENCY": "2",
    "TRUSTED_PROXIES": "127.0.0.1",
}
PATHS = {
    "entries": "/api/v1/entries?per_page=50",
    "follows": "/api/v1/entries/follows?per_page=50",
    "feeds": "/api/v1/feeds",
}
RSS_LIMIT_MB = 600


def database_reset(count: int) -> str:
    """`count` entries over 40 sources, and a Bearer token following 10 of them."""
    if "django" in sys.modules:
        from django.db import connections

        # The previous size's connections, pooled ones included, or the database cannot be
        # dropped.
        connections.close_all()
        if connections["default"].settings_dict.get("OPTIONS", {}).get("pool"):
            connections["default"].close_pool()
    news_bench.database_create()
    news_bench.database_fill(count)
    from news_site.accounts.models import Follow, Provider
    from news_site.accounts.services import account_for_identity, token_issue
    from news_site.news.models import Feed

    account = account_for_identity(
        provider=Provider.EMAIL, subject="bench@example.se", email="bench@example.se"
    )
    Follow.objects.bulk_create(
        Follow(account=account, feed=feed) for feed in Feed.objects.order_by("id")[:10]
    )
    raw, _token = token_issue(account=account)
    return raw


def ttrss_fill(ttrss: TtRss) -> None:
    """The news database's relevant entries, in tt-rss's tables, for its admin account."""
    with psycopg.connect(news_bench.ENV["NEWS_DATABASE_URL"]) as news:
        feeds = news.execute("SELECT id, title, url FROM news_feed ORDER BY id").fetchall()
        entries = news.execute(
            "SELECT feed_id, title, url, summary_original, published_at FROM news_entry "
            "WHERE platform_relevant ORDER BY id"
        ).fetchall()
    with ttrss._sql() as conn:
        conn.execute("DELETE FROM ttrss_feeds")
        conn.execute("DELETE FROM ttrss_entries")
        owner = conn.execute("SELECT id FROM ttrss_users WHERE login = %s", [LOGIN]).fetchone()[0]
        ids = {}
        for feed_id, title, url in feeds:
            row = conn.execute(
                "INSERT INTO ttrss_feeds (owner_uid, title, feed_url) VALUES (%s, %s, %s) "
                "RETURNING id",
                [owner, title, url],
            ).fetchone()
            ids[feed_id] = row[0]
        with conn.cursor() as cursor:
            cursor.executemany(
                "WITH e AS (INSERT INTO ttrss_entries (title, guid, link, updated, content, "
                "content_hash, date_entered, date_updated) VALUES (%s, %s, %s, %s, %s, %s, "
                "%s, %s) RETURNING id) INSERT INTO ttrss_user_entries (ref_id, uuid, "
                "feed_id, owner_uid, tag_cache, label_cache) SELECT id, '', %s, %s, '', '' "
                "FROM e",
                [
                    (
                        *(title, url, url, published, summary, url, published, published),
                        ids[feed_id],
                        owner,
                    )
                    for feed_id, title, url, summary, published in entries
                ],
            )
        conn.execute("ANALYZE")


def stack_start(work: Path, started: list[subprocess.Popen]) -> int:
    """gunicorn as deployed and nginx in front of it; the https port. Each process is added
    to `started` as soon as it runs, so that the caller stops it even when a later step
    fails."""
    app_port, static_port, stack_port = (news_bench.free_port() for _ in range(3))
    app = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "deploy/gunicorn/news.py"],
        cwd=REPO_ROOT,
        env={**os.environ, **ENV, "NEWS_BIND": f"127.0.0.1:{app_port}"},
    )
    started.append(app)
    # Each worker loads the embedding model before it serves (post_worker_init): on a busy
    # machine that alone can take most of a minute.
    news_bench.wait_for(f"http://127.0.0.1:{app_port}/entries.json", app, timeout=180)
    (work / "static").mkdir(exist_ok=True)
    (work / "static" / "entries.json").write_text("{}")
    # wrk's 8 connections stand for 8 app users, not one address: nginx's per-address limit
    # (20 requests a second) would answer nearly all of them with 429.
    config = news_bench.nginx_config(
        work,
        static_port=static_port,
        stack_port=stack_port,
        app_port=app_port,
        edge_limits=False,
    )
    nginx = subprocess.Popen([news_bench.nginx_binary(), "-c", str(config), "-g", "daemon off;"])
    started.append(nginx)
    news_bench.wait_for(
        f"https://127.0.0.1:{stack_port}/entries.json", nginx, ca=work / "bench.pem"
    )
    return stack_port


def worker_rss_mb(master: subprocess.Popen) -> float:
    children = subprocess.run(
        ["ps", "--ppid", str(master.pid), "-o", "rss="], capture_output=True, text=True
    ).stdout.split()
    return max(int(kb) for kb in children) / 1024


def measure(size: int, args: argparse.Namespace) -> tuple[dict[str, LoadResult], float]:
    print(f"filling {news_bench.DB_NAME} with {size} entries ...", flush=True)
    token = database_reset(size)
    headers = {"Authorization": f"Bearer {token}"}
    work = Path(tempfile.mkdtemp(prefix="news-personal-bench-"))
    work.chmod(0o755)
    started: list[subprocess.Popen] = []
    try:
        port = stack_start(work, started)
        results = {}
        for name, path in PATHS.items():
            url = f"https://127.0.0.1:{port}{path}"
            results[name] = wrk(
                url, headers=headers, seconds=args.seconds, connections=args.connections, runs=1
            )
            print(
                f"  {size:>7,} {path}: {results[name].requests_per_second:,.0f} req/s, "
                f"p99 {results[name].p99_ms:.1f} ms, {results[name].non_2xx} non-2xx",
                flush=True,
            )
        return results, worker_rss_mb(started[0])
    finally:
        for process in reversed(started):
            process.terminate()
            process.wait(timeout=20)
        shutil.rmtree(work, ignore_errors=True)


def ttrss_measure(args: argparse.Namespace) -> LoadResult | None:
    if not TtRss.available():
        print("tt-rss not installed: no comparison (see benchmarks/ttrss.py)")
        return None
    ttrss = TtRss()
    ttrss.setup()
    ttrss_fill(ttrss)
    print(f"  tt-rss getHeadlines answers {ttrss.headlines_check()} headlines", flush=True)
    result = ttrss.headlines_load(seconds=args.seconds, connections=args.connections)
    print(
        f"  tt-rss getHeadlines: {result.requests_per_second:,.0f} req/s, "
        f"p99 {result.p99_ms:.1f} ms",
        flush=True,
    )
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2200, 100_000])
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--connections", type=int, default=8)
    args = parser.parse_args()
    ensure_wrk()
    os.environ.update(ENV)

    ours: dict[int, dict[str, LoadResult]] = {}
    rss: dict[int, float] = {}
    theirs: dict[int, LoadResult | None] = {}
    for size in args.sizes:
        ours[size], rss[size] = measure(size, args)
        theirs[size] = ttrss_measure(args)

    smallest = min(args.sizes)
    ok = True
    print()
    print("| entries | endpoint | req/s | p99 | tt-rss req/s | ratio | targets met |")
    print("|---|---|---|---|---|---|---|")
    for size in args.sizes:
        baseline = theirs[size]
        for name, path in PATHS.items():
            result = ours[size][name]
            ratio = result.requests_per_second / baseline.requests_per_second if baseline else None
            passed = result.p99_ms < 30 and not result.non_2xx
            passed = passed and (ratio is None or ratio >= 3)
            scale = ours[smallest][name].requests_per_second / result.requests_per_second
            if size != smallest:
                passed = passed and scale <= 1.5
            ok = ok and passed
            shown = f"{ratio:.1f}x" if ratio is not None else "tt-rss not installed"
            print(
                f"| {size:,} | `{path}` | {result.requests_per_second:,.0f} | "
                f"{result.p99_ms:.1f} ms | "
                f"{baseline.requests_per_second if baseline else 0:,.0f} | {shown} | "
                f"{'yes' if passed else 'NO'} |"
            )
            target = ">= 3x tt-rss, p99 < 30 ms"
            if size != smallest:
                target += f", >= 1/1.5 of {smallest:,} entries"
            record(
                Figure(
                    f"news personalised /api/v1 (Bearer, nginx + TLS), {size:,} entries",
                    f"`{path}`",
                    f"{result.requests_per_second:,.0f} req/s, p99 {result.p99_ms:.1f} ms",
                    ratio=(f"{ratio:.1f}x tt-rss getHeadlines" if ratio is not None else "")
                    + (f", {1 / scale:.0%} of {smallest:,} entries" if size != smallest else ""),
                    target=target,
                    met=passed,
                )
            )
        if baseline:
            record(
                Figure(
                    f"news personalised /api/v1 (Bearer, nginx + TLS), {size:,} entries",
                    "tt-rss `getHeadlines` (limit 50, excerpts)",
                    f"{baseline.requests_per_second:,.0f} req/s, p99 {baseline.p99_ms:.1f} ms",
                    target="baseline",
                )
            )
        within = rss[size] < RSS_LIMIT_MB
        ok = ok and within
        print(
            f"| {size:,} | RSS of the largest worker after the load | {rss[size]:.0f} MB | | "
            f"| | {'yes' if within else 'NO'} |"
        )
        record(
            Figure(
                f"news personalised /api/v1 (Bearer, nginx + TLS), {size:,} entries",
                "RSS of the largest uvicorn worker after the load",
                f"{rss[size]:.0f} MB",
                target=f"< {RSS_LIMIT_MB} MB",
                met=within,
            )
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
