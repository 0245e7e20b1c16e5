"""Benchmark of the news service's hot read paths with 100,000 entries in PostgreSQL.

In one run, for /entries.json, /api/v1/entries, /entries/:id.md and /entries.rss:
- the ceiling: nginx serving the same response bytes as static files, over TLS;
- gunicorn (2 workers) straight;
- the deploy stack: nginx with deploy/nginx/news.conf (TLS, its cache) in front of that
  gunicorn, on loopback ports with a self-signed certificate.
Targets: the stack at least 50 % of the ceiling with a p99 within 3x of the ceiling's (issue
24: cached reads with a tail like static files), gunicorn at least 10 %, p99 under 50 ms.

Usage: python benchmarks/news_bench.py [--entries 100000] [--seconds 8]
Needs PostgreSQL on 127.0.0.1:5432 (role postgres); installs nginx and wrk with apt if missing.
BENCH_NEWS_DB names the database it (re)creates (news_bench unless set).
"""

import argparse
import os
import random
import re
import shutil
import ssl
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

import httpx
import psycopg

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from benchmarks.loadgen import LoadResult, ensure_wrk, wrk  # noqa: E402
from benchmarks.results import Figure, record  # noqa: E402

# The deploy stack's p99 at most this many times the static ceiling's (issue 24).
STACK_TAIL_TARGET = 3.0
PG = os.environ.get("BENCH_PG_URL", "postgres://postgres@127.0.0.1:5432")
DB_NAME = os.environ.get("BENCH_NEWS_DB", "news_bench")
ENV = {
    "NEWS_DATABASE_URL": f"{PG}/{DB_NAME}",
    "SECRET_KEY": "benchmark-only-secret-key",
    "SECURE_SSL_REDIRECT": "false",
    "DEBUG": "false",
    "ALLOWED_HOSTS": "127.0.0.1,localhost",
    "LOG_LEVEL": "WARNING",
}


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def database_create() -> None:
    with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{DB_NAME}"')
        conn.execute(f'CREATE DATABASE "{DB_NAME}"')
    subprocess.run(
        [sys.executable, "-m", "news_site", "migrate", "--noinput", "-v", "0"],
        cwd=REPO_ROOT,
        env={**os.environ, **ENV},
        check=True,
    )


def database_fill(count: int) -> int:
    """Bulk rows shaped like the pipeline's output; returns an entry id to read."""
    os.environ.update(ENV)
    os.environ["DJANGO_SETTINGS_MODULE"] = "news_site.settings"
    import django

    django.setup()
    from django.utils import timezone

    from news_site.news.models import Entry, Feed, SummaryState, Tag
    from news_site.news.text import sha256

    rng = random.Random(7)
    feeds = Feed.objects.bulk_create(
        Feed(title=f"Källa {n}", url=f"https://source{n}.example/feed.xml", language="sv")
        for n in range(40)
    )
    tags = Tag.objects.bulk_create(Tag(name=f"Ämne {n}", slug=f"amne-{n}") for n in range(15))
    now = timezone.now()
    through = Entry.tags.through
    batch = 5000
    for start in range(0, count, batch):
        rows = []
        for n in range(start, min(start + batch, count)):
            url = f"https://source.example/articles/{n}"
            published = now - timedelta(minutes=n)
            rows.append(
                Entry(
                    feed=feeds[n % len(feeds)],
                    guid=url,
                    guid_hash=sha256(f"guid{n}"),
                    url=url,
                    canonical_url=url,
                    canonical_url_hash=sha256(url),
                    title=f"Apple släpper uppdatering nummer {n} till iPhone och Mac",
                    image_url=f"https://img.example/{n}.jpg",
                    language="sv",
                    published_at=published,
                    listed_at=published,
                    content_fingerprint=sha256(f"text{n}"),
                    summary_original="Apple har släppt en uppdatering. " * 4,
                    summary_translated="Apple har släppt en uppdatering med flera nyheter. " * 4,
                    summary_state=SummaryState.TRANSLATED,
                    platform_relevant=rng.random() < 0.85,
                    view_count=rng.randint(0, 5000),
                )
            )
        created = Entry.objects.bulk_create(rows)
        through.objects.bulk_create(
            through(entry_id=entry.pk, tag_id=tags[index].pk)
            for entry in created
            for index in {entry.pk % len(tags), (entry.pk * 7) % len(tags)}
        )
    from django.db import connection

    # Settled as a database in service is: statistics current and the rows marked visible (so
    # autovacuum does not start on the new rows in the middle of a measurement, and counts can
    # read an index alone).
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
    return Entry.objects.filter(platform_relevant=True).order_by("-listed_at").first().pk


def nginx_binary() -> str:
    path = shutil.which("nginx") or "/usr/sbin/nginx"
    if not Path(path).exists():
        subprocess.run(["apt-get", "install", "-y", "-qq", "nginx"], check=True)
    return path


def certificate(work: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1, for the TLS the deployed site terminates."""
    cert, key = work / "bench.pem", work / "bench.key"
    subprocess.run(
        [
            *("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"),
            *("-keyout", str(key), "-out", str(cert)),
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


def nginx_config(
    work: Path, *, static_port: int, stack_port: int, app_port: int, edge_limits: bool = True
) -> Path:
    """The shipped site (TLS, cache, headers) on loopback ports, and a static server for the
    ceiling, over TLS too so that both sides pay for it. `edge_limits=False` leaves out nginx's
    per-address limits (as RUN_PROD_EDGE_LIMITS=off does), for a load from one address that
    stands in for many clients."""
    cert, key = certificate(work)
    site = (REPO_ROOT / "deploy" / "nginx" / "news.conf").read_text()
    replacements = {
        "server 127.0.0.1:8000;": f"server 127.0.0.1:{app_port};",
        # The HTTP-to-HTTPS redirect server is not measured.
        "listen 80;": f"listen 127.0.0.1:{free_port()};",
        "listen 443 ssl http2;": f"listen 127.0.0.1:{stack_port} ssl reuseport;",
        "/etc/ssl/certs/news.example.pem": str(cert),
        "/etc/ssl/private/news.example.key": str(key),
        "/var/cache/nginx/news": str(work / "cache"),
        "/var/log/nginx/news.access.log": str(work / "access.log"),
        "server_name news.example;": "server_name 127.0.0.1;",
    }
    for production, local in replacements.items():
        if production not in site:
            raise RuntimeError(f"deploy/nginx/news.conf no longer has {production!r}")
        site = site.replace(production, local)
    if not edge_limits:
        site = re.sub(r"(?m)^\s*limit_(req|conn) .*\n", "", site)
    (work / "news.conf").write_text(site)
    temp = "\n".join(
        f"{kind}_temp_path {work / kind};"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    config = work / "nginx.conf"
    config.write_text(
        f"""worker_processes 2;
pid {work / "nginx.pid"};
error_log {work / "error.log"} warn;
events {{ worker_connections 4096; }}
http {{
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 100000;
    {temp}
    server {{
        listen 127.0.0.1:{static_port} ssl reuseport;
        ssl_certificate {cert};
        ssl_certificate_key {key};
        root {work / "static"};
        location = /entries.json {{ default_type application/json; }}
        location = /api-entries.json {{ default_type application/json; }}
        location = /entry.md {{ default_type "text/markdown; charset=utf-8"; }}
        location = /entries.rss {{ default_type application/rss+xml; }}
    }}
    include {work / "news.conf"};
}}
"""
    )
    return config


# Long enough for a start on a loaded machine; the run fails, not waits, past it.
def wait_for(
    url: str, process: subprocess.Popen, timeout: float = 300, *, ca: Path | None = None
) -> None:
    verify = ssl.create_default_context(cafile=ca) if ca else True
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args[0]} exited with {process.returncode}")
        try:
            httpx.get(url, timeout=2, verify=verify)
            return
        except httpx.TransportError:
            time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer in time")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--connections", type=int, default=16)
    args = parser.parse_args()

    ensure_wrk()
    nginx = nginx_binary()
    print(f"filling {DB_NAME} with {args.entries} entries ...", flush=True)
    database_create()
    entry_id = database_fill(args.entries)
    paths = {
        "/entries.json": "/entries.json",
        "/api/v1/entries": "/api-entries.json",
        f"/entries/{entry_id}.md": "/entry.md",
        "/entries.rss": "/entries.rss",
    }

    work = Path(tempfile.mkdtemp(prefix="news-bench-"))
    # nginx workers run as an unprivileged user and write the cache under here.
    work.chmod(0o755)
    (work / "static").mkdir()
    app_port, static_port, stack_port = free_port(), free_port(), free_port()
    app = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            # Served as deployed: the ASGI app (with its cache of public responses) on uvicorn
            # workers.
            "news_site.asgi:application",
            "--worker-class",
            "uvicorn_worker.UvicornWorker",
            "--bind",
            f"127.0.0.1:{app_port}",
            "--workers",
            "2",
            "--log-level",
            "warning",
        ],
        cwd=REPO_ROOT,
        env={**os.environ, **ENV},
    )
    server = None
    try:
        app_url = f"http://127.0.0.1:{app_port}"
        wait_for(app_url + "/entries.json", app)
        for path, static_name in paths.items():
            response = httpx.get(app_url + path)
            response.raise_for_status()
            (work / "static" / static_name.lstrip("/")).write_bytes(response.content)
        # wrk's connections stand for many readers, not one address: nginx's per-address limit
        # (20 requests a second) would answer nearly all of them with 429 (burst_bench.py
        # measures the limits).
        config = nginx_config(
            work,
            static_port=static_port,
            stack_port=stack_port,
            app_port=app_port,
            edge_limits=False,
        )
        server = subprocess.Popen([nginx, "-c", str(config), "-g", "daemon off;"])
        wait_for(f"https://127.0.0.1:{static_port}/entries.json", server, ca=work / "bench.pem")

        rows = []
        ok = True
        for path, static_name in paths.items():
            ceiling = wrk(
                f"https://127.0.0.1:{static_port}{static_name}",
                seconds=args.seconds,
                connections=args.connections,
            )
            direct = wrk(app_url + path, seconds=args.seconds, connections=args.connections)
            stack = wrk(
                f"https://127.0.0.1:{stack_port}{path}",
                seconds=args.seconds,
                connections=args.connections,
            )
            for label, result, target in (
                ("static ceiling", ceiling, None),
                ("gunicorn (2 workers)", direct, 0.10),
                ("nginx stack (deploy/)", stack, 0.50),
            ):
                share = result.requests_per_second / ceiling.requests_per_second
                tail = result.p99_ms / ceiling.p99_ms
                passed = target is None or (
                    share >= target and result.p99_ms < 50 and not result.non_2xx
                )
                if result is stack:
                    passed = passed and tail <= STACK_TAIL_TARGET
                ok = ok and passed
                rows.append((path, label, result, share, tail, target, passed))
        print()
        print(f"load average {' '.join(f'{n:.1f}' for n in os.getloadavg())}")
        print("| path | server | req/s | p99 | non-2xx | share of ceiling | p99 / ceiling's | ok |")
        print("|---|---|---|---|---|---|---|---|")
        for row in rows:
            print(_row(*row))
        record(
            *(
                Figure(
                    f"news public reads, {args.entries:,} entries",
                    f"`{path}`, {label}",
                    f"{result.requests_per_second:,.0f} req/s, p99 {result.p99_ms:.1f} ms",
                    ratio=f"{share:.0%} of static, p99 {tail:.1f}x static's",
                    target=_goal(target, label) or "ceiling",
                    met=passed if target else None,
                )
                for path, label, result, share, tail, target, passed in rows
            )
        )
        return 0 if ok else 1
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=10)
            errors = (work / "error.log").read_text().strip().splitlines()
            if errors:
                print("nginx error log (last lines):", *errors[-5:], sep="\n")
        app.terminate()
        app.wait(timeout=10)
        shutil.rmtree(work, ignore_errors=True)


def _goal(target: float | None, label: str) -> str:
    if target is None:
        return ""
    goal = f">= {target:.0%} of static, p99 < 50 ms"
    if label.startswith("nginx stack"):
        goal += f" and <= {STACK_TAIL_TARGET:.0f}x static's"
    return goal


def _row(
    path: str,
    label: str,
    result: LoadResult,
    share: float,
    tail: float,
    target: float | None,
    passed: bool,
) -> str:
    return (
        f"| `{path}` | {label} | {result.requests_per_second:,.0f} | {result.p99_ms:.1f} ms "
        f"| {result.non_2xx} | {share:.0%} | {tail:.1f}x | {'yes' if passed else 'NO'} |"
    )


if __name__ == "__main__":
    sys.exit(main())
