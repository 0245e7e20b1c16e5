"""`make bench`: every benchmark script in turn, then one markdown table of their figures and
targets, written to benchmarks/RESULTS.md and into docs/benchmarks.md between its bench markers.

Each script prints its own details as it goes and appends its figures (benchmarks/results.py)
to a scratch file this runner hands it. A script that fails still leaves the figures it got
to; the table says which scripts failed, and so does the exit status.

Usage: python benchmarks/run_all.py [--only NAME ...]
Needs PostgreSQL on 127.0.0.1:5432 and Redis on 127.0.0.1:6379, as `make test` does.
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
RESULTS = REPO_ROOT / "benchmarks" / "RESULTS.md"
# The page whose table is rewritten (the README links it).
BENCH_DOC = REPO_ROOT / "docs" / "benchmarks.md"
START, END = "<!-- bench:start -->", "<!-- bench:end -->"
PG = "postgres://postgres@127.0.0.1:5432"

# (name, arguments, extra environment)
SCRIPTS: list[tuple[str, list[str], dict[str, str]]] = [
    ("compliance_bench", ["benchmarks/compliance_bench.py"], {}),
    ("compliance_hostile_bench", ["benchmarks/compliance_hostile_bench.py"], {}),
    ("news_bench", ["benchmarks/news_bench.py"], {}),
    ("news_api_bench", ["benchmarks/news_api_bench.py"], {}),
    ("news_personal_bench", ["benchmarks/news_personal_bench.py"], {}),
    ("news_mcp_bench", ["benchmarks/news_mcp_bench.py"], {}),
    ("news_search_quality (SQLite)", ["benchmarks/news_search_quality.py"], {}),
    (
        "news_search_quality (PostgreSQL)",
        ["benchmarks/news_search_quality.py"],
        {"NEWS_DATABASE_URL": f"{PG}/news_search_quality"},
    ),
    ("news_cluster_quality", ["benchmarks/news_cluster_quality.py"], {}),
    ("burst_bench", ["benchmarks/burst_bench.py"], {}),
    ("burst_junk_bench", ["benchmarks/burst_junk_bench.py"], {}),
    ("news_hostile_bench", ["benchmarks/news_hostile_bench.py"], {}),
    # Beside tt-rss where it is installed (docs/benchmarks-ttrss.md); our figures alone elsewhere.
    ("news_ingest_bench", ["benchmarks/news_ingest_bench.py"], {}),
    # The task worker's peak through a first pass (issue 24: <= 300 MB).
    ("news_worker_rss", ["benchmarks/news_worker_rss.py"], {}),
    # A fresh clone to the `make run` banner (issue 26): time, CPU time, .venv size.
    ("install_bench", ["benchmarks/install_bench.py"], {}),
]


def database_recreate(url: str) -> None:
    import psycopg

    name = url.rsplit("/", 1)[1]
    with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')


def run(name: str, arguments: list[str], env: dict[str, str], results: Path) -> bool:
    """Run one script; whether it succeeded."""
    print(f"\n### {name}", flush=True)
    if "NEWS_DATABASE_URL" in env:
        database_recreate(env["NEWS_DATABASE_URL"])
    completed = subprocess.run(
        [sys.executable, *arguments],
        cwd=REPO_ROOT,
        env={**os.environ, **env, "BENCH_RESULTS": str(results)},
    )
    return completed.returncode == 0


def table(figures: list[dict], failed: list[str]) -> str:
    machine = f"{os.cpu_count()} cores, Python {platform.python_version()}"
    lines = [
        f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC by `make bench` ({machine}; "
        "the machine is shared, so figures are medians of one run, not promises).",
        "",
        "| benchmark | measure | figure | ratio to its ceiling | target | met |",
        "|---|---|---|---|---|---|",
    ]
    for figure in figures:
        met = {True: "yes", False: "**no**", None: ""}[figure["met"]]
        lines.append(
            f"| {figure['benchmark']} | {figure['measure']} | {figure['value']} "
            f"| {figure['ratio']} | {figure['target']} | {met} |"
        )
    if failed:
        lines += ["", "Scripts that failed: " + ", ".join(failed) + "."]
    return "\n".join(lines) + "\n"


def readme_update(rendered: str) -> None:
    text = BENCH_DOC.read_text(encoding="utf-8")
    if START not in text or END not in text:
        print(f"docs/benchmarks.md has no {START} ... {END} section; table left in {RESULTS}")
        return
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    BENCH_DOC.write_text(f"{head}{START}\n{rendered}{END}{tail}", encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="run only scripts whose name starts so")
    args = parser.parse_args()
    chosen = [
        script
        for script in SCRIPTS
        if not args.only or any(script[0].startswith(prefix) for prefix in args.only)
    ]
    failed: list[str] = []
    with tempfile.TemporaryDirectory() as scratch:
        results = Path(scratch) / "figures.jsonl"
        results.touch()
        for name, arguments, env in chosen:
            if not run(name, arguments, env, results):
                failed.append(name)
        figures = [json.loads(line) for line in results.read_text().splitlines()]
    rendered = table(figures, failed)
    RESULTS.write_text("# Benchmark results\n\n" + rendered, encoding="utf-8")
    if not args.only:
        readme_update(rendered)
    print("\n" + rendered)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
