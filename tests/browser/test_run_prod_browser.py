"""The editor's first session on the deployed stack (`make run-prod`: nginx with TLS in front of
gunicorn, PostgreSQL, Redis, the task worker), in Chromium. The stack is started as
tests/run_prod.py starts it; it needs PostgreSQL, so it runs in the PostgreSQL pass.
The schedule of a deployment is a systemd timer, so the test queues the ingest run itself, as
the timer would."""

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.browser.editor_flow import editor_session
from tests.conftest import COMMAND_BOUND_SECONDS, REPO_ROOT
from tests.run_prod import STARTUP_SECONDS, Stack, run_prod_stack, wait_ready

PASSWORD = "browser-test-password-1"


def _stack_environment(stack: Stack) -> dict[str, str]:
    """What the stack was started with (its databases and Redis), from the script's process."""
    raw = Path(f"/proc/{stack.process.pid}/environ").read_bytes()
    return dict(item.decode().split("=", 1) for item in raw.split(b"\0") if b"=" in item)


def _news_command(
    stack: Stack, *args: str, extra_env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    started = _stack_environment(stack)
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.endswith("_DATABASE_URL") and key != "DJANGO_SETTINGS_MODULE"
    }
    env.update(
        NEWS_DATABASE_URL=f"{started['PG_URL']}/{started['RUN_PROD_NEWS_DB']}",
        REDIS_URL=started["RUN_PROD_REDIS_URL"],
        ENV_FILE="",
    )
    env.update(extra_env or {})
    return subprocess.run(
        [sys.executable, "-m", "news_site", *args],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=COMMAND_BOUND_SECONDS,
    )


@pytest.fixture
def prod_stack(tmp_path: Path) -> Iterator[Stack]:
    # The editor's feed is served from loopback by the test.
    with run_prod_stack(tmp_path, {"FETCH_ALLOW_PRIVATE_NETWORKS": "true"}) as stack:
        yield stack


def test_an_editor_adds_a_feed_on_the_deployed_stack(
    prod_stack: Stack, browser, local_server
) -> None:
    stack = prod_stack
    with httpx.Client(verify=False, timeout=10) as client:  # noqa: S501 - self-signed
        wait_ready(stack, client)
    # The account is made the way run-prod's banner says: `make run-prod-admin`, which runs
    # scripts/run_prod.sh createsuperuser with run-prod's settings (its databases, not the
    # quick start's SQLite). Here with the stack's own databases and no questions.
    banner = _banner(stack)
    assert "make run-prod-admin" in banner, banner
    made = subprocess.run(
        [
            "bash",
            "scripts/run_prod.sh",
            "createsuperuser",
            "news",
            "--noinput",
            "--username=redaktor",
            "--email=r@example.com",
        ],
        cwd=REPO_ROOT,
        env={**_stack_environment(stack), "DJANGO_SUPERUSER_PASSWORD": PASSWORD},
        capture_output=True,
        text=True,
        timeout=COMMAND_BOUND_SECONDS,
    )
    assert made.returncode == 0, made.stdout + made.stderr
    assert stack.databases[0] in made.stdout, made.stdout
    context = browser.new_context(ignore_https_errors=True)
    context.set_default_timeout(20_000)
    page = context.new_page()
    try:
        editor_session(
            page,
            stack.url("news", ""),
            "redaktor",
            PASSWORD,
            local_server,
            on_added=lambda: _queue_ingest(stack),
        )
    finally:
        context.close()


def _banner(stack: Stack) -> str:
    """run-prod's banner, printed once everything has started (waited for, bounded as the
    stack's start is)."""
    deadline = time.monotonic() + STARTUP_SECONDS
    while "run-prod is running" not in (output := stack.output()):
        assert stack.process.poll() is None, output[-3000:]
        assert time.monotonic() < deadline, output[-3000:]
        time.sleep(0.5)
    return output.split("run-prod is running", 1)[1]


def _queue_ingest(stack: Stack) -> None:
    queued = _news_command(stack, "ingest", "--enqueue")
    assert queued.returncode == 0, queued.stderr
