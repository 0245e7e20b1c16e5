"""Compliance webhooks benchmark: 1,000 change events to 10 endpoints through the task worker.

Seeds the 51 bundled states and reindexes (published before any endpoint exists, so not
delivered), registers 10 endpoints on loopback receivers, commits 1,000 edits and reindexes
once, with two `python -m compliance_site db_worker` processes running. Then reports:
- delivery latency after reindex (from the moment reindex committed to each event's first
  arrival at each endpoint), p50 / p99 / max;
- attempts per event (1.00 means nothing was sent twice);
and verifies every delivery it times: the signature with the code of
docs/compliance-integrators.md, the body's data against the change event as /changes shows
it, every event arrived at every endpoint, in order per resource.

Uses PostgreSQL on its standard loopback port when it answers, else SQLite.
Run: `.venv/bin/python benchmarks/compliance_webhooks_bench.py [--events 1000 --endpoints 10]`.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from benchmarks.results import Figure, record  # noqa: E402

DEMO_STATES = REPO_ROOT / "compliance_site" / "records" / "demo_data" / "states"
DOCS = REPO_ROOT / "docs" / "compliance-integrators.md"
PG_ADMIN = "postgres://postgres@127.0.0.1:5432/postgres"
PG_BENCH = "postgres://postgres@127.0.0.1:5432/compliance_webhooks_bench"
# Only asked whether it answers (scripts/services_ready.py checks both); webhooks need no cache.
REDIS = "redis://127.0.0.1:6379/13"
WORKERS = 2
DEADLINE_SECONDS = 900


def documented_verify():
    """The verification function exactly as the integrators' docs show it."""
    text = DOCS.read_text()
    section = text[text.index("**Verifying a delivery.**") :]
    code = re.findall(r"```python\n(.*?)```", section, re.S)[0]
    namespace: dict = {}
    exec(compile(code, str(DOCS), "exec"), namespace)  # noqa: S102 - our own docs
    return namespace["verify_signature"]


class Receiver:
    """A loopback endpoint that records (arrival time, signature header, body) of each POST."""

    def __init__(self) -> None:
        self.arrivals: list[tuple[float, str, bytes]] = []
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with receiver.lock:
                    receiver.arrivals.append(
                        (time.time(), self.headers.get("Compliance-Signature", ""), body)
                    )
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/hook"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


def git(repo: Path, *args: str) -> None:
    identity = {
        "GIT_AUTHOR_NAME": "Bench Editor",
        "GIT_AUTHOR_EMAIL": "bench@example.org",
        "GIT_COMMITTER_NAME": "Bench Editor",
        "GIT_COMMITTER_EMAIL": "bench@example.org",
    }
    subprocess.run(["git", *args], cwd=repo, check=True, env={**os.environ, **identity})


def build_repository(repo: Path, edits: int) -> None:
    """The seed commit of the 51 bundled states, then `edits` commits each changing one
    state's summary (written with git fast-import)."""
    import yaml

    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "states").mkdir()
    abbrs = []
    for source in sorted(DEMO_STATES.glob("*.yaml")):
        (repo / "states" / source.name).write_text(source.read_text())
        abbrs.append(source.stem)
    git(repo, "add", "states")
    # Dated well after every verification date in the data (reindex refuses the reverse).
    git(repo, "commit", "-q", "-m", "Seed", "--date", "2030-01-01T00:00:00+00:00")
    states = {a: yaml.safe_load((repo / "states" / f"{a}.yaml").read_text()) for a in abbrs}
    stream = []
    clock = 1_893_456_000 + 3600  # 2030-01-01 01:00 UTC
    for number in range(edits):
        abbr = abbrs[number % len(abbrs)]
        data = states[abbr]
        data["summary"] = f"{str(data.get('summary', ''))[:300]} Revision {number}."
        text = yaml.safe_dump(
            {k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in data.items()},
            sort_keys=False,
            allow_unicode=True,
        ).encode()
        message = f"Edit {abbr} ({number})".encode()
        who = b"Bench Editor <bench@example.org> %d +0000" % (clock + number * 60)
        parent = b"from refs/heads/main^0\n" if number == 0 else b""
        stream.append(
            b"commit refs/heads/main\nauthor %s\ncommitter %s\ndata %d\n%s\n%sM 100644 inline "
            b"states/%s.yaml\ndata %d\n%s\n\n"
            % (who, who, len(message), message, parent, abbr.encode(), len(text), text)
        )
    subprocess.run(["git", "fast-import", "--quiet"], cwd=repo, input=b"".join(stream), check=True)
    git(repo, "checkout", "-q", "-f", "main")


def services_available() -> bool:
    return (
        subprocess.run(
            [sys.executable, str(REPO_ROOT / "scripts" / "services_ready.py"), PG_ADMIN, REDIS],
            capture_output=True,
        ).returncode
        == 0
    )


def wait_for_workers() -> None:
    """Until every worker has run a task (an empty sweep): latency is timed from the reindex,
    not from the workers' start."""
    from django_tasks_db.models import DBTaskResult

    from compliance_site.webhooks.tasks import webhooks_sweep

    deadline = time.time() + 120
    while time.time() < deadline:
        webhooks_sweep.enqueue()
        time.sleep(0.5)
        seen = DBTaskResult.objects.filter(status="SUCCESSFUL").values_list("worker_ids", flat=True)
        if len({worker for ids in seen for worker in ids}) >= WORKERS:
            return
    sys.exit("!! the task workers did not start")


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1000)
    parser.add_argument("--endpoints", type=int, default=10)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="compliance-webhooks-bench-"))
    repo = work / "data"
    build_repository(repo, args.events)

    use_postgres = services_available()
    env = {
        "SECRET_KEY": "bench-secret",
        "SECURE_SSL_REDIRECT": "false",
        "DEBUG": "false",
        "FETCH_ALLOW_PRIVATE_NETWORKS": "true",
        "LOG_LEVEL": "WARNING",
        "ENV_FILE": "",
    }
    if use_postgres:
        import psycopg

        with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
            admin.execute("DROP DATABASE IF EXISTS compliance_webhooks_bench WITH (FORCE)")
            admin.execute("CREATE DATABASE compliance_webhooks_bench")
        env["COMPLIANCE_DATABASE_URL"] = PG_BENCH
    else:
        env["COMPLIANCE_DATABASE_URL"] = f"sqlite:///{work / 'bench.sqlite3'}"
    os.environ.update(env)
    os.environ["DJANGO_SETTINGS_MODULE"] = "compliance_site.settings"
    os.environ["PYTHONPATH"] = str(REPO_ROOT)

    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connections

    from compliance_site.access.keys import api_key_create
    from compliance_site.records.events import CHANGE_EVENT_COLUMNS, change_event_shape
    from compliance_site.records.models import ResourceType, ResourceVersion
    from compliance_site.records.reindex import reindex
    from compliance_site.webhooks.models import WebhookDelivery
    from compliance_site.webhooks.services import webhook_create

    call_command("migrate", verbosity=0)
    # The seed is published before any endpoint exists: reindex up to the seed commit first.
    git(repo, "branch", "-q", "seed", "main~" + str(args.events))
    git(repo, "checkout", "-q", "seed")
    assert reindex(repo_path=str(repo)).ok
    git(repo, "checkout", "-q", "main")
    seeded = ResourceVersion.objects.count()

    receivers = [Receiver() for _ in range(args.endpoints)]
    key, _raw = api_key_create(name="bench")
    secrets = []
    for receiver in receivers:
        _endpoint, secret = webhook_create(
            api_key=key, url=receiver.url, resource_types=ResourceType.values, allow_private=True
        )
        secrets.append(secret)
    connections.close_all()

    workers = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "compliance_site",
                "db_worker",
                "--no-reload",
                "--interval",
                "0.2",
            ],
            cwd=REPO_ROOT,
            env=os.environ.copy(),
        )
        for _ in range(WORKERS)
    ]
    try:
        wait_for_workers()
        report = reindex(repo_path=str(repo))
        committed = time.time()
        assert report.ok, report.problems[:3]
        events = list(
            ResourceVersion.objects.filter(sequence__gt=0)
            .order_by("sequence")
            .values("id", "sequence", *CHANGE_EVENT_COLUMNS)
        )[seeded:]
        assert len(events) == args.events, (len(events), args.events)
        expected = args.events * args.endpoints
        while sum(len(r.arrivals) for r in receivers) < expected:
            if time.time() - committed > DEADLINE_SECONDS:
                sys.exit(f"!! only {sum(len(r.arrivals) for r in receivers)} of {expected} arrived")
            time.sleep(0.2)
    finally:
        for worker in workers:
            worker.terminate()
        for worker in workers:
            worker.wait(timeout=60)

    verify = documented_verify()
    shapes = {(e["resource_type"], e["resource_key"], e["version"]): e for e in events}
    latencies = []
    problems = []
    for receiver, secret in zip(receivers, secrets, strict=True):
        first_arrival: dict[tuple, float] = {}
        order: dict[tuple[str, str], list[int]] = {}
        for arrived, signature, body in receiver.arrivals:
            if not verify(secret, signature, body, now=arrived):
                problems.append(f"{receiver.url}: a signature does not verify")
                continue
            data = json.loads(body)["data"]
            event_key = (data["resource_type"], data["resource_key"], data["version"])
            if data != change_event_shape(shapes[event_key]):
                problems.append(f"{receiver.url}: {event_key} differs from /changes")
            first_arrival.setdefault(event_key, arrived)
            order.setdefault(event_key[:2], []).append(data["version"])
        missing = set(shapes) - set(first_arrival)
        if missing:
            problems.append(f"{receiver.url}: {len(missing)} events never arrived")
        for resource, versions in order.items():
            if versions != sorted(versions):
                problems.append(f"{receiver.url}: {resource} out of order: {versions}")
        latencies.extend(t - committed for t in first_arrival.values())
    deliveries = WebhookDelivery.objects.filter(sequence__gt=events[0]["sequence"] - 1)
    attempts = sum(deliveries.values_list("attempts", flat=True))
    arrivals = sum(len(r.arrivals) for r in receivers)
    if problems:
        print("\n".join(problems[:20]))
        sys.exit(f"!! {len(problems)} problems")

    database = "PostgreSQL" if use_postgres else "SQLite"
    p50, p99 = percentile(latencies, 0.5), percentile(latencies, 0.99)
    per_event = attempts / expected
    print()
    print(
        f"## Compliance webhooks benchmark ({database}, {args.events} events x "
        f"{args.endpoints} endpoints, {WORKERS} task workers)"
    )
    print()
    print("| measure | figure |")
    print("|---|---|")
    rows = [
        ("deliveries verified (signature, body, order per resource)", f"{len(latencies)}"),
        ("delivery latency after reindex, p50", f"{p50:.2f} s"),
        ("delivery latency after reindex, p99", f"{p99:.2f} s"),
        (
            "delivery latency after reindex, min / max",
            f"{min(latencies):.2f} s / {max(latencies):.2f} s",
        ),
        ("throughput", f"{expected / max(latencies):.0f} deliveries/s"),
        ("attempts per event and endpoint", f"{per_event:.2f}"),
        ("arrivals per delivery (duplicates)", f"{arrivals / expected:.2f}"),
    ]
    for measure, figure in rows:
        print(f"| {measure} | {figure} |")
    record(
        *(Figure("compliance webhooks", measure, figure) for measure, figure in rows),
    )


if __name__ == "__main__":
    main()
