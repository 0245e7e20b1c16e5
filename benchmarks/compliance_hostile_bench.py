"""Compliance hostile-input benchmark: what the worst inputs cost the batch jobs.

Reports, in one run:
- the worst monitored page's normalise + hash time, over pages built to defeat the HTML parser
  and the volatile-token patterns, each at the longest length the monitor reads and at the
  5 MiB body cap, where it is refused as too long (target < 1 s);
- a YAML bomb's refusal time and peak memory (a 2 KB alias bomb, 5,000 and 100,000 levels
  deep, files at and over the size cap), each in a fresh process (targets < 1 s and < 50 MB);
- the time of a reindex over the 51 bundled states plus every hostile commit of the test suite's
  table (control bytes in messages and names, offsets of 24 hours and more, a timestamp past
  year 9999, and the YAML bombs), with the run's outcome.

Uses PostgreSQL on its standard loopback port when it answers, else SQLite.
Run: `.venv/bin/python benchmarks/compliance_hostile_bench.py`.
"""

import contextlib
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from benchmarks.results import Figure, record  # noqa: E402

DEMO_STATES = REPO_ROOT / "compliance_site" / "records" / "demo_data" / "states"
PG_ADMIN = "postgres://postgres@127.0.0.1:5432/postgres"
PG_BENCH = "postgres://postgres@127.0.0.1:5432/compliance_hostile_bench"
# The monitor's default body cap (MONITOR_MAX_BYTES): the largest page it ever receives.
BODY_CAP = 5 * 1024 * 1024


def hostile_pages(size: int) -> dict[str, bytes]:
    """Pages of `size` bytes, each aimed at one part of the normaliser."""

    def repeat(unit: bytes, prefix: bytes = b"", suffix: bytes = b"") -> bytes:
        return prefix + unit * ((size - len(prefix) - len(suffix)) // len(unit)) + suffix

    return {
        "1,1,1,... (the 129 s page)": repeat(b"1,", b"<p>", b"</p>"),
        "1.1.1.... ": repeat(b"1.", b"<p>", b"</p>"),
        "<a <a <a ...": repeat(b"<a "),
        "<x<x<x...": repeat(b"<x"),
        "<!--<!--...": repeat(b"<!--"),
        "</</</...": repeat(b"</"),
        "<?<?<?...": repeat(b"<?"),
        "<<<<...": repeat(b"<"),
        "&&&&...": repeat(b"&"),
        "<div> nested": repeat(b"<div>"),
        "Last updated: 1 1 1 ...": repeat(b"1 ", b"<p>Last updated: ", b"</p>"),
        "1:11 1:11 ...": repeat(b"1:11 ", b"<p>", b"</p>"),
        "1/1 1/1 ...": repeat(b"1/1 ", b"<p>", b"</p>"),
        "visits: visits: ...": repeat(b"visits: ", b"<p>", b"</p>"),
        "a1-a1-a1-... (token run)": repeat(b"a1-", b"<p>", b"</p>"),
        "jan jan jan ...": repeat(b"jan ", b"<p>", b"</p>"),
        "<p>&nbsp;a&zwsp; ...": repeat("<p>\u00a0a\u200b".encode(), b"", b""),
        "plain words": repeat(b"hello world ", b"<p>", b"</p>"),
    }


def page_times() -> list[tuple[str, float]]:
    """Each hostile page at the longest length the monitor reads (MAX_READ_CHARS), and at the
    body cap, where it is refused as too long to compare."""
    from compliance_site.monitoring.normalize import MAX_READ_CHARS, PageTooLong, content_hash

    def hashed(body: bytes) -> None:
        with contextlib.suppress(PageTooLong):
            content_hash(body, "text/html; charset=utf-8")

    rows = []
    pages = {
        f"{name}, {MAX_READ_CHARS:,} bytes": body
        for name, body in hostile_pages(MAX_READ_CHARS).items()
    }
    pages |= {f"{name}, 5 MiB (refused)": body for name, body in hostile_pages(BODY_CAP).items()}
    for name, body in pages.items():
        times = []
        for _ in range(3):
            started = time.perf_counter()
            hashed(body)
            times.append(time.perf_counter() - started)
        rows.append((name, statistics.median(times)))
    return rows


def nested(depth: int) -> str:
    return "summary: " + "[" * depth + "]" * depth + "\n"


# The billion laughs, padded to 2 KB: 12 levels of 10 references, 10^12 expansions if built.
_LEVELS = [chr(ord("a") + i) for i in range(12)]
ALIAS_BOMB = f"{_LEVELS[0]}: &{_LEVELS[0]} [{', '.join(['lol'] * 10)}]\n" + "".join(
    f"{name}: &{name} [{', '.join(['*' + below] * 10)}]\n"
    for below, name in itertools.pairwise(_LEVELS)
)
ALIAS_BOMB += "#" * (2048 - len(ALIAS_BOMB) - 1) + "\n"
BOMBS = {
    f"alias bomb ({len(ALIAS_BOMB)} bytes, 10^12 expansions)": ALIAS_BOMB,
    "nested 5,000 deep": nested(5_000),
    "nested 100,000 deep": nested(100_000),
    "flat file just under the 512 KiB cap": "summary: " + "x" * (512 * 1024 - 20) + "\n",
    "file over the cap (8 MiB)": "summary: " + "x" * (8 * 1024 * 1024) + "\n",
}

# Runs in a fresh process, so that the peak resident size is the bomb's alone.
# Memory is the larger of the growth of the peak resident size (libyaml's C allocations) and the
# peak of Python's allocations (tracemalloc) during the parse.
_BOMB_CHILD = """
import json, resource, sys, time, tracemalloc
from compliance_site.records.documents import InvalidDocument, StateValidator, parse_state
content = sys.stdin.buffer.read()
checker = StateValidator()
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
tracemalloc.start()
started = time.perf_counter()
try:
    parse_state("states/TX.yaml", content, checker=checker)
    verdict = "accepted"
except InvalidDocument as exc:
    verdict = exc.message
elapsed = time.perf_counter() - started
python_peak_kb = tracemalloc.get_traced_memory()[1] / 1024
rss_growth_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
peak_kb = max(python_peak_kb, rss_growth_kb)
print(json.dumps({"seconds": elapsed, "peak_kb": peak_kb, "verdict": verdict}))
"""


def bomb_costs() -> list[tuple[str, float, float, str]]:
    rows = []
    for name, text in BOMBS.items():
        completed = subprocess.run(
            [sys.executable, "-c", _BOMB_CHILD],
            input=text.encode(),
            capture_output=True,
            cwd=REPO_ROOT,
            timeout=120,
            check=True,
        )
        result = json.loads(completed.stdout)
        rows.append((name, result["seconds"], result["peak_kb"] / 1024, result["verdict"]))
    return rows


def raw_commit(repo: Path, message: bytes, author: bytes, stamp: str) -> None:
    def git(*args: str, data: bytes | None = None) -> str:
        return subprocess.run(
            ["git", *args], cwd=repo, input=data, capture_output=True, check=True
        ).stdout.decode()

    tree = git("write-tree").strip()
    parent = git("rev-parse", "HEAD").strip()
    person = author + b" <a@example.org> " + stamp.encode()
    body = (
        f"tree {tree}\nparent {parent}\n".encode()
        + b"author "
        + person
        + b"\ncommitter "
        + person
        + b"\n\n"
        + message
    )
    sha = git("hash-object", "-t", "commit", "--literally", "-w", "--stdin", data=body).strip()
    git("update-ref", "HEAD", sha)


def build_hostile_repository(path: Path) -> int:
    """The 51 bundled states, then the hostile commits; returns the number of commits."""
    path.mkdir(parents=True)
    (path / "states").mkdir()

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=path, capture_output=True, check=True)

    git("init", "-q", "-b", "main")
    for source in DEMO_STATES.glob("*.yaml"):
        text = source.read_text(encoding="utf-8")
        # Verified on the seed's day, as the demo's own seed commit says.
        lines = [
            "last_verified_at: 2026-01-05" if line.startswith("last_verified_at:") else line
            for line in text.splitlines()
        ]
        (path / "states" / source.name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    git("add", "states")
    git(
        "-c",
        "user.name=Seed",
        "-c",
        "user.email=seed@example.org",
        "commit",
        "-q",
        "-m",
        "Seed",
        "--date=1767600000 +0000",
    )
    metadata = [
        (b"a\x1eb\n", b"Ada", "1767700000 +0000"),
        (b"m\n", b"A\x1fda", "1767700000 +0000"),
        (b"before\x00after\n", b"Ada", "1767700000 +0000"),
        (b"\x1b[31m\x7f\x85\n", b"\x01\x02", "1767700000 -0000"),
        (b"m\n", b"Ada", "1767700000 +2400"),
        (b"m\n", b"Ada", "1767700000 -2530"),
        (b"m\n", b"Ada", "1767700000 +9999"),
        (b"m\n", b"Ada", "99999999999999 +0000"),
        (b"m\n", b"Ada", "10 -0001"),
    ]
    commits = 1
    for index, (message, author, stamp) in enumerate(metadata):
        state = path / "states" / "CA.yaml"
        state.write_text(state.read_text().replace("name: California", f"name: California {index}"))
        git("add", "states")
        raw_commit(path, message, author, stamp)
        commits += 1
    for name, text in BOMBS.items():
        (path / "states" / "OH.yaml").write_text(text)
        git("add", "states")
        raw_commit(path, f"Hostile file: {name}\n".encode(), b"Ada", "1767800000 +0000")
        commits += 1
    return commits


def reindex_time(work: Path) -> tuple[float, int, str]:
    repo = work / "data"
    commits = build_hostile_repository(repo)
    env = {"SECRET_KEY": "bench-secret", "SECURE_SSL_REDIRECT": "false", "DEBUG": "false"}
    try:
        import psycopg

        with psycopg.connect(PG_ADMIN, autocommit=True, connect_timeout=2) as admin:
            admin.execute("DROP DATABASE IF EXISTS compliance_hostile_bench WITH (FORCE)")
            admin.execute("CREATE DATABASE compliance_hostile_bench")
        env["COMPLIANCE_DATABASE_URL"] = PG_BENCH
        database = "PostgreSQL"
    except Exception:  # no PostgreSQL here: SQLite
        env["COMPLIANCE_DATABASE_URL"] = f"sqlite:///{work / 'bench.sqlite3'}"
        database = "SQLite"
    env.pop("REDIS_URL", None)
    os.environ.update(env)
    os.environ.pop("REDIS_URL", None)
    os.environ["DJANGO_SETTINGS_MODULE"] = "compliance_site.settings"
    import django

    django.setup()
    from django.core.management import call_command

    from compliance_site.records.reindex import reindex

    call_command("migrate", verbosity=0)
    started = time.perf_counter()
    report = reindex(repo_path=str(repo))
    elapsed = time.perf_counter() - started
    outcome = (
        f"{report.commits_read} commits read, {sum(report.published.values())} versions "
        f"published, {len(report.problems)} invalid file versions reported ({database})"
    )
    return elapsed, commits, outcome


def main() -> None:
    pages = page_times()
    print("## Monitored pages: normalise + hash (median of 3), slowest first")
    for name, seconds in sorted(pages, key=lambda row: -row[1])[:12]:
        print(f"  {seconds * 1000:8.0f} ms  {name}")
    worst_page, worst_page_time = max(pages, key=lambda row: row[1])

    bombs = bomb_costs()
    print("\n## YAML bombs: refusal time and peak memory (fresh process each)")
    for name, seconds, megabytes, verdict in bombs:
        print(f"  {seconds * 1000:8.1f} ms  {megabytes:6.1f} MB  {name}: {verdict[:90]}")
    worst_bomb_time = max(row[1] for row in bombs)
    worst_bomb_memory = max(row[2] for row in bombs)

    with tempfile.TemporaryDirectory(prefix="compliance-hostile-") as work:
        elapsed, commits, outcome = reindex_time(Path(work))
    print(f"\n## Reindex of 51 states and the hostile commits ({commits} commits)")
    print(f"  {elapsed:.2f} s: {outcome}")

    record(
        Figure(
            "compliance_hostile",
            f"worst monitored page ({worst_page}): normalise + hash",
            f"{worst_page_time * 1000:.0f} ms",
            target="< 1 s",
            met=worst_page_time < 1,
        ),
        Figure(
            "compliance_hostile",
            "YAML bomb refused: worst time",
            f"{worst_bomb_time * 1000:.1f} ms",
            target="< 1 s",
            met=worst_bomb_time < 1,
        ),
        Figure(
            "compliance_hostile",
            "YAML bomb refused: worst peak memory",
            f"{worst_bomb_memory:.1f} MB",
            target="< 50 MB",
            met=worst_bomb_memory < 50,
        ),
        Figure(
            "compliance_hostile",
            f"reindex of 51 states + hostile commits ({commits} commits)",
            f"{elapsed:.2f} s",
        ),
    )
    failed = worst_page_time >= 1 or worst_bomb_time >= 1 or worst_bomb_memory >= 50
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
