"""Compliance benchmark: reindex of a 10,000-commit history and API throughput under gunicorn.

Builds a data repository of the 51 bundled states with about 10,000 commits (git fast-import),
then reports in one run:
- full reindex time, and its ratio to `git log -p` over the same history (the floor);
- incremental reindex time after one new commit (median of 5);
- requests/second and p99 of GET /states/:abbr and GET /changes under gunicorn (2 workers).

Uses PostgreSQL and Redis on their standard loopback ports when they answer, else SQLite.
Run: `.venv/bin/python benchmarks/compliance_bench.py [--commits 10000]`.
"""

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import yaml

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from benchmarks.loadgen import wrk  # noqa: E402
from benchmarks.results import Figure, record  # noqa: E402

DEMO_STATES = REPO_ROOT / "compliance_site" / "records" / "demo_data" / "states"
PG_ADMIN = "postgres://postgres@127.0.0.1:5432/postgres"
PG_BENCH = "postgres://postgres@127.0.0.1:5432/compliance_bench"
REDIS = "redis://127.0.0.1:6379/14"
_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def build_repository(path: Path, commits: int, seed: int = 7) -> None:
    """One seeding commit of 51 files, then commits that each edit one to three states."""
    rng = random.Random(seed)
    states = {p.stem: yaml.safe_load(p.read_text()) for p in sorted(DEMO_STATES.glob("*.yaml"))}
    abbrs = sorted(states)
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    stream = []
    mark = 0
    # The history starts the day after the newest verification in the data: reindex refuses a
    # record verified after its commit's date.
    newest = max(state["last_verified_at"] for state in states.values())
    clock = int(datetime.combine(newest + timedelta(days=1), datetime.min.time(), UTC).timestamp())

    def blob(data: dict) -> int:
        nonlocal mark
        mark += 1
        text = yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True).encode()
        stream.append(b"blob\nmark :%d\ndata %d\n%s\n" % (mark, len(text), text))
        return mark

    def commit(message: str, files: dict[str, int], parent: int | None) -> int:
        nonlocal mark, clock
        mark += 1
        clock += rng.randint(600, 7200)
        who = b"Bench Editor <bench@example.org> %d -0500" % clock
        body = message.encode()
        lines = [
            b"commit refs/heads/main",
            b"mark :%d" % mark,
            b"author " + who,
            b"committer " + who,
        ]
        lines.append(b"data %d" % len(body))
        lines.append(body)
        if parent:
            lines.append(b"from :%d" % parent)
        lines += [b"M 100644 :%d states/%s.yaml" % (m, a.encode()) for a, m in files.items()]
        stream.append(b"\n".join(lines) + b"\n\n")
        return mark

    for data in states.values():
        for key, value in list(data.items()):
            if hasattr(value, "isoformat"):
                data[key] = value.isoformat()
    head = commit("Seed", {a: blob(states[a]) for a in abbrs}, None)
    for number in range(1, commits):
        touched = rng.sample(abbrs, 3 if number % 25 == 0 else 1)
        files = {}
        for abbr in touched:
            data = states[abbr]
            data["summary"] = f"{data.get('summary', '')[:400]} Revision {number}."[-450:]
            if number % 40 == 0:
                data["sources"] = [
                    *data["sources"][:2],
                    {"name": f"Rule {number}", "url": f"https://rules.example/{number}"},
                ]
            files[abbr] = blob(data)
        trailer = "\n\nChange-Source: llm_drafted" if number % 100 == 0 else ""
        head = commit(f"Edit {', '.join(touched)} (revision {number}){trailer}", files, head)
    subprocess.run(["git", "fast-import", "--quiet"], cwd=path, input=b"".join(stream), check=True)
    subprocess.run(["git", "checkout", "-q", "main"], cwd=path, check=True)


def services_available() -> bool:
    return (
        subprocess.run(
            [sys.executable, str(REPO_ROOT / "scripts" / "services_ready.py"), PG_ADMIN, REDIS],
            capture_output=True,
        ).returncode
        == 0
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commits", type=int, default=10_000)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="compliance-bench-"))
    repo = work / "data"

    started = time.perf_counter()
    build_repository(repo, args.commits)
    print(f"built {args.commits} commits in {time.perf_counter() - started:.1f} s at {repo}")

    use_postgres = services_available()
    env = {"SECRET_KEY": "bench-secret", "SECURE_SSL_REDIRECT": "false", "DEBUG": "false"}
    if use_postgres:
        import psycopg

        with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
            admin.execute("DROP DATABASE IF EXISTS compliance_bench WITH (FORCE)")
            admin.execute("CREATE DATABASE compliance_bench")
        env |= {"COMPLIANCE_DATABASE_URL": PG_BENCH, "REDIS_URL": REDIS}
    else:
        env |= {"COMPLIANCE_DATABASE_URL": f"sqlite:///{work / 'bench.sqlite3'}"}
    os.environ.update(env)
    os.environ["DJANGO_SETTINGS_MODULE"] = "compliance_site.settings"

    import django

    django.setup()
    from django.core.management import call_command

    from compliance_site.access.keys import api_key_create
    from compliance_site.records.models import ResourceVersion
    from compliance_site.records.reindex import reindex

    call_command("migrate", verbosity=0)

    floor_times = []
    for _ in range(3):
        started = time.perf_counter()
        subprocess.run(
            ["git", "log", "-p", "--first-parent", "--", "states/"],
            cwd=repo,
            stdout=subprocess.DEVNULL,
            check=True,
        )
        floor_times.append(time.perf_counter() - started)
    floor = statistics.median(floor_times)

    started = time.perf_counter()
    report = reindex(repo_path=str(repo))
    full = time.perf_counter() - started
    versions = ResourceVersion.objects.count()
    assert report.ok, report.problems[:3]

    incremental_times = []
    for number in range(5):
        target = repo / "states" / "TX.yaml"
        target.write_text(
            target.read_text().replace("Revision", f"Incremental {number} revision", 1)
        )
        subprocess.run(
            ["git", "commit", "-qam", f"Incremental {number}"],
            cwd=repo,
            check=True,
            env={
                **os.environ,
                "GIT_AUTHOR_NAME": "B",
                "GIT_AUTHOR_EMAIL": "b@e.org",
                "GIT_COMMITTER_NAME": "B",
                "GIT_COMMITTER_EMAIL": "b@e.org",
            },
        )
        started = time.perf_counter()
        incremental_report = reindex(repo_path=str(repo))
        incremental_times.append(time.perf_counter() - started)
        assert incremental_report.commits_read == 1
    incremental = statistics.median(incremental_times)

    _key, raw_key = api_key_create(name="bench", rate_limit_per_minute=10**9)
    from django.db import connections

    connections.close_all()
    port = 8790
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gunicorn",
            "compliance_site.wsgi",
            "--bind",
            f"127.0.0.1:{port}",
            "--workers",
            "2",
            "--log-level",
            "warning",
        ],
        cwd=REPO_ROOT,
        env=os.environ.copy(),
    )
    try:
        base = f"http://127.0.0.1:{port}/api/v1/compliance"
        _wait_until_up(f"{base}/review_flags")
        auth = {"Authorization": f"Bearer {raw_key}"}
        state = wrk(f"{base}/states/TX", headers=auth)
        changes = wrk(f"{base}/changes?limit=100", headers=auth)
    finally:
        server.terminate()
        server.wait(timeout=10)

    database = "PostgreSQL + Redis" if use_postgres else "SQLite"
    print()
    print(f"## Compliance benchmark ({database}, {args.commits} commits, {versions} versions)")
    print()
    print("| measure | figure | target |")
    print("|---|---|---|")
    rows = [
        ("full reindex", f"{full:.2f} s", "< 10 s"),
        ("`git log -p` over the same history (floor)", f"{floor:.2f} s", ""),
        ("full reindex / `git log -p`", f"{full / floor:.2f}x", ""),
        (
            "incremental reindex after one commit (median of 5)",
            f"{incremental * 1000:.0f} ms",
            "< 1 s",
        ),
        ("GET /states/TX, gunicorn 2 workers", _load(state), ""),
        ("GET /changes?limit=100, gunicorn 2 workers", _load(changes), ""),
    ]
    for measure, figure, target in rows:
        print(f"| {measure} | {figure} | {target} |")
    record(
        Figure(
            "compliance",
            f"full reindex, {args.commits} commits ({database})",
            f"{full:.2f} s",
            ratio=f"{full / floor:.1f}x `git log -p` ({floor:.2f} s)",
            target="< 10 s",
            met=full < 10,
        ),
        Figure(
            "compliance",
            "incremental reindex after one commit (median of 5)",
            f"{incremental * 1000:.0f} ms",
            target="< 1 s",
            met=incremental < 1,
        ),
        Figure("compliance", "GET /states/TX, gunicorn 2 workers", _load(state)),
        Figure("compliance", "GET /changes?limit=100, gunicorn 2 workers", _load(changes)),
    )
    if state.non_2xx or changes.non_2xx:
        print(f"\n!! non-2xx responses: states {state.non_2xx}, changes {changes.non_2xx}")


def _load(result) -> str:
    return f"{result.requests_per_second:.0f} req/s, p99 {result.p99_ms:.1f} ms"


def _wait_until_up(url: str) -> None:
    import httpx

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            httpx.get(url, timeout=2)
            return
        except httpx.TransportError:
            time.sleep(0.2)
    raise RuntimeError("gunicorn did not start")


if __name__ == "__main__":
    main()
