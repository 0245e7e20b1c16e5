"""The reference sync client (clients/compliance_sync) against a live compliance server: the
demo dataset synced fully, then incrementally across three reindexes of a real git repository
(with a backdated commit), every event exactly once compared with `git log`; through a tiny
per-key limit (429 and Retry-After, the limiter's clock moved instead of slept); and the command
line killed mid-sync and started again from its checkpoint file."""

import json
import os
import signal
import subprocess
import sys
import time
from collections import defaultdict
from datetime import datetime, timedelta, timezone
from pathlib import Path
from types import SimpleNamespace

import django_ratelimit.core
import git
import pytest
import yaml

import shared.ratelimit
from compliance_site.access.keys import api_key_create
from compliance_site.records.demo import build_demo_repository
from compliance_site.records.models import ResourceType, ResourceVersion
from compliance_site.records.reindex import reindex
from compliance_sync import ComplianceClient, checkpoint_load
from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.django_db(transaction=True)

CLIENT_SOURCE = REPO_ROOT / "clients" / "compliance_sync" / "src"
EASTERN = timezone(timedelta(hours=-5))


class DemoRepo:
    """The demo data repository, reindexed, with edits committed on top."""

    def __init__(self, path: Path) -> None:
        self.path = path
        build_demo_repository(path)
        self.repo = git.Repo(path)
        self.clock = datetime(2026, 11, 20, 9, 0, tzinfo=EASTERN)

    def reindex(self) -> None:
        report = reindex(repo_path=str(self.path))
        assert report.ok, report

    def edit(self, message: str, changes: dict[str, str], *, when: datetime | None = None) -> None:
        for abbr, summary in changes.items():
            path = self.path / "states" / f"{abbr}.yaml"
            text = path.read_text()
            header = "".join(line for line in text.splitlines(keepends=True) if line[:1] == "#")
            document = yaml.safe_load(text)
            document["summary"] = summary
            path.write_text(header + yaml.safe_dump(document, sort_keys=False, allow_unicode=True))
            self.repo.index.add([f"states/{abbr}.yaml"])
        if when is None:
            self.clock += timedelta(hours=1)
            when = self.clock
        actor = git.Actor("Sync Test", "sync@example.org")
        self.repo.index.commit(
            message, author=actor, committer=actor, author_date=when, commit_date=when
        )

    def state_history(self, abbr: str) -> list[str]:
        """`git log` of a state's file, oldest first, as the feed's 12-character git_sha."""
        commits = self.repo.iter_commits(paths=f"states/{abbr}.yaml")
        return [commit.hexsha[:12] for commit in reversed(list(commits))]


@pytest.fixture
def demo(tmp_path: Path, settings) -> DemoRepo:
    repo = DemoRepo(tmp_path / "demo")
    settings.COMPLIANCE_DATA_REPO = repo.path
    repo.reindex()
    return repo


@pytest.fixture
def limiter_clock(monkeypatch):
    """The clock the rate limiter counts windows by, moved forward by the client's sleeps."""
    now = [time.time()]
    clock = SimpleNamespace(time=lambda: now[0])
    monkeypatch.setattr(django_ratelimit.core, "time", clock)
    monkeypatch.setattr(shared.ratelimit, "time", clock)

    def sleep(seconds: float) -> None:
        now[0] += seconds

    return sleep


def _assert_exactly_the_published_events(events: list[dict], demo: DemoRepo) -> None:
    seen = [(e["resource_type"], e["resource_key"], e["version"]) for e in events]
    assert len(seen) == len(set(seen)), "an event was emitted twice"
    published = set(ResourceVersion.objects.values_list("resource_type", "resource_key", "version"))
    assert set(seen) == published
    by_resource: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for event in events:
        by_resource[(event["resource_type"], event["resource_key"])].append(event)
    for (resource_type, key), history in by_resource.items():
        # Oldest first: a consumer applying them in order ends at the live version.
        assert [e["version"] for e in history] == list(range(1, len(history) + 1))
        if resource_type == ResourceType.STATE:
            assert [e["git_sha"] for e in history] == demo.state_history(key)
    states = {key for kind, key in by_resource if kind == ResourceType.STATE}
    assert len(states) == 51


def test_full_then_incremental_across_three_reindexes_through_429s(
    live_server, demo, limiter_clock, tmp_path
):
    _key, raw = api_key_create(name="tiny", rate_limit_per_minute=4)
    state = tmp_path / "checkpoint.json"
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        limiter_clock(seconds)

    client = ComplianceClient(
        base_url=f"{live_server.url}/api/v1/compliance", api_key=raw, page_size=40, sleep=sleep
    )
    with client:
        full = client.sync(state)
        events = list(full.events)
        assert full.pages > 4 and waits, "the tiny limit was never reached"
        rounds = [
            {"TX": "Texas, edited once.", "OH": "Ohio, edited once."},
            {"TX": "Texas, edited twice.", "CA": "California, edited."},
            {"NY": "New York, edited.", "FL": "Florida, edited."},
        ]
        for number, changes in enumerate(rounds, start=1):
            demo.edit(f"Round {number}", changes)
            if number == 2:
                # Dated before the rounds already synced: a `since` client would miss it.
                demo.edit(
                    "Backdated fix",
                    {"WA": "Washington, backdated."},
                    when=datetime(2026, 11, 18, 9, 0, tzinfo=EASTERN),
                )
            demo.reindex()
            result = client.sync(state)
            new_keys = {e["resource_key"] for e in result.events if e["resource_type"] == "State"}
            assert new_keys == set(changes) | ({"WA"} if number == 2 else set())
            events += result.events
        nothing = client.sync(state)

    assert nothing.events == []
    assert all(1 <= wait <= 60 for wait in waits)
    _assert_exactly_the_published_events(events, demo)


def _cli(live_server, raw_key: str, state: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "compliance_sync",
            "--base",
            f"{live_server.url}/api/v1/compliance",
            "--state",
            str(state),
            *extra,
        ],
        env={**os.environ, "PYTHONPATH": str(CLIENT_SOURCE), "COMPLIANCE_API_KEY": raw_key},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for_a_pass_in_progress(state: Path, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert process.poll() is None, "the sync finished before it could be interrupted"
        try:
            if len(checkpoint_load(state).pending) >= 10:
                return
        except (FileNotFoundError, ValueError):
            pass  # not written yet
        time.sleep(0.02)
    raise AssertionError("no checkpoint of a pass in progress appeared")


@pytest.mark.parametrize("stop", [signal.SIGKILL, signal.SIGTERM])
def test_the_command_killed_mid_sync_resumes_from_its_checkpoint(live_server, demo, tmp_path, stop):
    _key, raw = api_key_create(name="cli", rate_limit_per_minute=100_000)
    state = tmp_path / "checkpoint.json"

    first = _cli(live_server, raw, state, "--page-size", "1")
    _wait_for_a_pass_in_progress(state, first)
    first.send_signal(stop)
    interrupted_output, _ = first.communicate(timeout=30)
    interrupted = checkpoint_load(state)
    second = _cli(live_server, raw, state, "--page-size", "50")
    resumed_output, errors = second.communicate(timeout=120)
    demo.edit("After the restart", {"TX": "Texas, after the restart."})
    demo.reindex()
    third = _cli(live_server, raw, state)
    incremental_output, _ = third.communicate(timeout=60)

    # Nothing is emitted before a pass completes, so the interrupted run printed nothing.
    assert interrupted_output == ""
    assert interrupted.cursor and interrupted.pending and interrupted.sync_token is None
    assert second.returncode == 0, errors
    events = [json.loads(line) for line in (resumed_output + incremental_output).splitlines()]
    assert [(e["resource_key"], e["git_sha"]) for e in events[-1:]] == [
        ("TX", demo.state_history("TX")[-1])
    ]
    _assert_exactly_the_published_events(events, demo)
