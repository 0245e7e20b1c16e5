"""Benchmark of the personalised /api/v1 lists (a Bearer token, so no response cache answers),
through the deploy stack, beside tt-rss's getHeadlines on the same entries.

For the 2,200-entry set (40 sources, the size of the issue's measurement) and for 100,000
entries in PostgreSQL: `GET /api/v1/entries?per_page=50`, `GET /api/v1/entries/follows?per_page=50`
(10 followed sources) and `GET /api/v1/feeds`, each with `Authorization: Bearer`, through nginx
(deploy/nginx/news.conf, TLS) to gunicorn (deploy/gunicorn/news.py: uvicorn workers, 2 of
them), Redis as the cache; wrk at 8 connections (one per thread) for 20 s, every answer checked
against the ids its page must hold, in order (read from the database). Then the resident memory
of the largest worker after that load. tt-rss (benchmarks/ttrss.py, when installed) gets the
same entries, titles, links and excerpts, written into its own tables, and answers getHeadlines
(limit 50, excerpts, a logged-in session) under the same wrk load. Each load's line and row
also give the share of the machine's CPU time the hypervisor gave to other guests while it ran
(steal, /proc/stat): on a shared machine, a tail can be that rather than the code.

Modes (`--modes`, all by default; at the smallest size only, larger sizes measure `deployed`):
- `deployed`: as shipped, kept copies on (docs/api-performance.md);
- `bumped`: the same while the content generation is raised every 10 s (`--bump-seconds`), as
  each ingest run does (news.generation.content_changed, from a thread of this process), so the
  kept pages are made again;
- `users`: `/entries/follows` with 200 accounts (`--users`) of distinct follow sets, their
  tokens in rotation, each answer checked against its own caller's page;
- `off`: a stack started with every cache and kept copy off (NEWS_RESPONSE_CACHE_SECONDS=0,
  NEWS_PROCESS_COPIES=false): every request renders its page from the database.

Targets (issue #24): deployed >= 3x tt-rss's requests/s and p99 < 30 ms, at 100,000 entries at
least 1/1.5 of its 2,200-entry requests/s; bumped and users p99 < 30 ms; off >= 2x tt-rss and
p99 < 50 ms; worker RSS < 600 MB.

Usage: python benchmarks/news_personal_bench.py [--sizes 2200 100000] [--modes ...] [--seconds 20]
Needs PostgreSQL on 127.0.0.1:5432, Redis on 127.0.0.1:6379 (or BENCH_REDIS_URL), nginx, and
wrk; BENCH_NEWS_DB names the database it (re)creates (news_personal_bench unless set),
BENCH_TTRSS_DB and BENCH_TTRSS_DIR tt-rss's database and directory (ttrss_bench,
/tmp/ttrss-bench).
"""

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

import psycopg

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from benchmarks import news_bench  # noqa: E402
from benchmarks.loadgen import CHECKED_TOTALS, LoadResult, ensure_wrk, wrk  # noqa: E402
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


def database_reset(count: int) -> tuple[str, tuple[int, ...]]:
    """`count` entries over 40 sources, and a Bearer token following 10 of them (with their
    ids)."""
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
    followed = tuple(Feed.objects.order_by("id").values_list("id", flat=True)[:10])
    Follow.objects.bulk_create(Follow(account=account, feed_id=feed) for feed in followed)
    raw, _token = token_issue(account=account)
    return raw, followed


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


def stack_start(work: Path, started: list[subprocess.Popen], env: dict[str, str]) -> int:
    """gunicorn as deployed (with `env` added) and nginx in front of it; the https port. Each
    process is added to `started` as soon as it runs, so that the caller stops it even when a
    later step fails."""
    app_port, static_port, stack_port = (news_bench.free_port() for _ in range(3))
    app = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "deploy/gunicorn/news.py"],
        cwd=REPO_ROOT,
        env={**os.environ, **ENV, **env, "NEWS_BIND": f"127.0.0.1:{app_port}"},
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


@dataclass(frozen=True)
class Caller:
    """A Bearer token and the ids of the sources its account follows."""

    token: str
    feed_ids: tuple[int, ...]


def users_make(count: int) -> list[Caller]:
    """`count` accounts, each following its own set of 10 of the 40 sources (no two alike)."""
    from news_site.accounts.models import Follow, Provider
    from news_site.accounts.services import account_for_identity, token_issue
    from news_site.news.models import Feed

    feeds = list(Feed.objects.order_by("id").values_list("id", flat=True))
    rng = random.Random(24)
    sets: set[tuple[int, ...]] = set()
    while len(sets) < count:
        sets.add(tuple(sorted(rng.sample(feeds, 10))))
    callers = []
    for n, feed_ids in enumerate(sorted(sets)):
        email = f"reader{n}@example.se"
        account = account_for_identity(provider=Provider.EMAIL, subject=email, email=email)
        Follow.objects.bulk_create(Follow(account=account, feed_id=feed) for feed in feed_ids)
        raw, _token = token_issue(account=account)
        callers.append(Caller(raw, feed_ids))
    return callers


def expected_ids(path: str, caller: Caller) -> list[int]:
    """The ids the answer to `path` must hold for `caller`, in order, read from the database
    (the entries of a page, or the sources of /feeds)."""
    from news_site.news import selectors

    if path == PATHS["feeds"]:
        return list(selectors.feed_list().values_list("id", flat=True)[:20])
    if path == PATHS["follows"]:
        entries = selectors.entry_list().filter(feed_id__in=caller.feed_ids)
    else:
        entries = selectors.entry_list()
    return list(entries.values_list("id", flat=True)[:50])


# wrk's Lua: each request takes the next caller's token (round robin, each thread starting at
# its own place) and each answer is checked against that caller's page: status 200 and exactly
# the expected ids in order. Every thread has one connection (-t = -c) and no pipelining, so a
# thread's next answer is always to the request it is writing: the caller is chosen by how many
# answers the thread has had (wrk may ask request() again for the same write, when TLS must
# retry it, or after a reconnection).
ROTATION = """
local path = %(path)s
local tokens = {%(tokens)s}
local expected = {%(expected)s}
local item = %(item)s
local threads = {}
function setup(thread)
  thread:set("start", #threads * 7)
  table.insert(threads, thread)
end
function init(args)
  checked = 0; wrong = 0
end
local function caller()
  return ((start + checked) %% #tokens) + 1
end
function request()
  return wrk.format("GET", path, {["Authorization"] = "Bearer " .. tokens[caller()]})
end
function response(status, headers, body)
  local asked = caller()
  checked = checked + 1
  local ids = {}
  for id in string.gmatch(body, item) do ids[#ids + 1] = id end
  if status ~= 200 or table.concat(ids, ",") ~= expected[asked] then
    wrong = wrong + 1
  end
end
"""


def lua(text: str) -> str:
    return json.dumps(text)


def load(port: int, path: str, callers: list[Caller], args: argparse.Namespace) -> LoadResult:
    """wrk at `args.connections` against `path`, the callers' tokens in rotation, every
    answer checked; a wrong or missing answer stops the benchmark."""
    # An entry opens with its id and url; a source of /feeds with its id and title.
    item = '{"id":(%d+),"title":' if path == PATHS["feeds"] else '{"id":(%d+),"url":'
    script = (
        ROTATION
        % {
            "path": lua(path),
            "tokens": ",".join(lua(caller.token) for caller in callers),
            "expected": ",".join(
                lua(",".join(str(i) for i in expected_ids(path, caller))) for caller in callers
            ),
            "item": lua(item),
        }
        + CHECKED_TOTALS
    )
    result = wrk(
        f"https://127.0.0.1:{port}{path}",
        seconds=args.seconds,
        connections=args.connections,
        threads=args.connections,
        runs=1,
        check=script,
    )
    if not result.checked or result.wrong:
        raise RuntimeError(f"{path}: {result.wrong} of {result.checked} answers wrong")
    return result


class Bumper:
    """Raises the content generation every `seconds`, as each ingest run does
    (news_site.news.generation.content_changed): every kept page is made again."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.bumps = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        from news_site.news.generation import content_changed

        while not self._stop.wait(self.seconds):
            content_changed()
            self.bumps += 1

    def __enter__(self) -> "Bumper":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


@dataclass(frozen=True)
class Row:
    mode: str
    path: str
    result: LoadResult
    note: str = ""


def stack_measure(
    env: dict[str, str], runs: list[tuple[str, str, list[Caller], float]], args: argparse.Namespace
) -> tuple[list[Row], float]:
    """One stack started with `env`, loaded with each (mode, path, callers, bump seconds) in
    turn; the rows and the largest worker's RSS after the load."""
    work = Path(tempfile.mkdtemp(prefix="news-personal-bench-"))
    work.chmod(0o755)
    started: list[subprocess.Popen] = []
    rows = []
    try:
        port = stack_start(work, started, env)
        for mode, path, callers, bump in runs:
            if bump:
                with Bumper(bump) as bumper:
                    result = load(port, path, callers, args)
                note = f"{bumper.bumps} bumps"
            else:
                result = load(port, path, callers, args)
                note = f"{len(callers)} callers" if len(callers) > 1 else ""
            rows.append(Row(mode, path, result, note))
            print(
                f"  {mode:>8} {path}: {result.requests_per_second:,.0f} req/s, "
                f"p99 {result.p99_ms:.1f} ms, {result.checked} answers checked, "
                f"{result.stolen:.0%} of the CPU stolen" + (f" ({note})" if note else ""),
                flush=True,
            )
        return rows, worker_rss_mb(started[0])
    finally:
        for process in reversed(started):
            process.terminate()
            process.wait(timeout=20)
        shutil.rmtree(work, ignore_errors=True)


def ttrss_measure(args: argparse.Namespace) -> LoadResult | None:
    if not TtRss.available():
        print("tt-rss not installed: no comparison (see benchmarks/ttrss.py)")
        return None
    ttrss = TtRss(
        database=os.environ.get("BENCH_TTRSS_DB", "ttrss_bench"),
        workdir=Path(os.environ.get("BENCH_TTRSS_DIR", "/tmp/ttrss-bench")),
    )
    ttrss.setup()
    ttrss_fill(ttrss)
    print(f"  tt-rss getHeadlines answers {ttrss.headlines_check()} headlines", flush=True)
    result = ttrss.headlines_load(seconds=args.seconds, connections=args.connections)
    print(
        f"  tt-rss getHeadlines: {result.requests_per_second:,.0f} req/s, "
        f"p99 {result.p99_ms:.1f} ms, {result.stolen:.0%} of the CPU stolen",
        flush=True,
    )
    return result


# What each mode must show (issue #24): p99 ceiling (ms) and the least multiple of tt-rss's
# getHeadlines requests/s.
TARGETS = {"deployed": (30, 3.0), "bumped": (30, None), "users": (30, None), "off": (50, 2.0)}
MODE_NAMES = {
    "deployed": "kept copies on",
    "bumped": "kept copies on, content bumped every 10 s",
    "users": "kept copies on, 200 users of distinct follow sets",
    "off": "every cache and kept copy off",
}


def size_measure(
    size: int, smallest: bool, args: argparse.Namespace
) -> tuple[list[Row], float, LoadResult | None]:
    print(f"filling {news_bench.DB_NAME} with {size} entries ...", flush=True)
    token, feed_ids = database_reset(size)
    bench = [Caller(token, feed_ids)]
    modes = args.modes if smallest else ["deployed"]
    deployed = [("deployed", path, bench, 0.0) for path in PATHS.values()]
    if "bumped" in modes:
        deployed += [
            ("bumped", PATHS[name], bench, args.bump_seconds) for name in ("entries", "follows")
        ]
    if "users" in modes:
        deployed.append(("users", PATHS["follows"], users_make(args.users), 0.0))
    rows, rss = stack_measure({}, deployed, args)
    if "off" in modes:
        off = [("off", PATHS[name], bench, 0.0) for name in ("entries", "follows")]
        off_rows, _rss = stack_measure(
            {"NEWS_RESPONSE_CACHE_SECONDS": "0", "NEWS_PROCESS_COPIES": "false"}, off, args
        )
        rows += off_rows
    return rows, rss, ttrss_measure(args)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2200, 100_000])
    parser.add_argument(
        "--modes",
        nargs="+",
        choices=list(TARGETS),
        default=list(TARGETS),
        help="what to measure at the smallest size (larger sizes: deployed only)",
    )
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--users", type=int, default=200)
    parser.add_argument("--bump-seconds", type=float, default=10)
    args = parser.parse_args()
    ensure_wrk()
    os.environ.update(ENV)
    print(f"load average at the start: {os.getloadavg()[0]:.1f}", flush=True)

    measured = {}
    for size in args.sizes:
        measured[size] = size_measure(size, size == min(args.sizes), args)
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")

    smallest = min(args.sizes)
    ok = True
    print()
    print(
        "| entries | mode | endpoint | req/s | p99 | CPU stolen | tt-rss req/s | ratio "
        "| targets met |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for size, (rows, rss, baseline) in measured.items():
        bench_name = f"news personalised /api/v1 (Bearer, nginx + TLS), {size:,} entries"
        for row in rows:
            result = row.result
            p99_max, least = TARGETS[row.mode]
            rps = result.requests_per_second
            ratio = rps / baseline.requests_per_second if baseline else None
            passed = result.p99_ms < p99_max and not result.non_2xx
            if least is not None and ratio is not None:
                passed = passed and ratio >= least
            target = f"p99 < {p99_max} ms" + (f", >= {least:g}x tt-rss" if least else "")
            if size != smallest:
                base = next(
                    r for r in measured[smallest][0] if (r.mode, r.path) == ("deployed", row.path)
                )
                scale = base.result.requests_per_second / rps
                passed = passed and scale <= 1.5
                target += f", >= 1/1.5 of {smallest:,} entries"
            ok = ok and passed
            shown = f"{ratio:.1f}x" if ratio is not None else "tt-rss not installed"
            mode = MODE_NAMES[row.mode] + (f" ({row.note})" if row.note else "")
            print(
                f"| {size:,} | {mode} | `{row.path}` | {rps:,.0f} | {result.p99_ms:.1f} ms | "
                f"{result.stolen:.0%} | "
                f"{baseline.requests_per_second if baseline else 0:,.0f} | {shown} | "
                f"{'yes' if passed else 'NO'} |"
            )
            record(
                Figure(
                    bench_name,
                    f"`{row.path}`, {mode}",
                    f"{rps:,.0f} req/s, p99 {result.p99_ms:.1f} ms",
                    ratio=f"{ratio:.1f}x tt-rss getHeadlines" if ratio is not None else "",
                    target=target,
                    met=passed,
                )
            )
        if baseline:
            record(
                Figure(
                    bench_name,
                    "tt-rss `getHeadlines` (limit 50, excerpts)",
                    f"{baseline.requests_per_second:,.0f} req/s, p99 {baseline.p99_ms:.1f} ms",
                    target="baseline",
                )
            )
        within = rss < RSS_LIMIT_MB
        ok = ok and within
        print(
            f"| {size:,} | kept copies on | RSS of the largest worker after the load | "
            f"{rss:.0f} MB | | | | | {'yes' if within else 'NO'} |"
        )
        record(
            Figure(
                bench_name,
                "RSS of the largest uvicorn worker after the load",
                f"{rss:.0f} MB",
                target=f"< {RSS_LIMIT_MB} MB",
                met=within,
            )
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
