"""Browser tests: Playwright driving the system's Chromium (Debian's `chromium`, installed by
the Makefile's setup and .ci/run; never a browser Playwright downloads) against the quick start
as `make run` starts it (scripts/quickstart.sh, on free ports, with its own data folder and
.env), so every test sees what a new user sees."""

import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from dotenv import dotenv_values

from tests.conftest import COMMAND_BOUND_SECONDS, REPO_ROOT, free_port

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# A bound for a quick start that never comes up, not a budget: the banner is waited for. Under a
# load of 16 on two cores (eight suites side by side) a healthy start took over 240 s.
STARTUP_SECONDS = 600
# A feed added in admin must be fetched within this long (the test's schedule runs every 3 s).
FETCH_SECONDS = 90


def missing(what: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{what} (.ci/run provides it)")
    pytest.skip(what)


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    if not Path(CHROMIUM).exists() and not shutil.which("chromium"):
        missing(f"Chromium is not installed at {CHROMIUM} (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser) -> Iterator[object]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(20_000)
    page = context.new_page()
    yield page
    context.close()


@dataclass
class QuickStart:
    process: subprocess.Popen
    log: Path
    var_dir: Path
    env_file: Path
    news: str
    compliance: str

    def setting(self, name: str) -> str:
        return dotenv_values(self.env_file)[name] or ""

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def python(self, project: str, *args: str) -> subprocess.CompletedProcess:
        """An operator command as a user types it after `make run`: only .env configures it."""
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.endswith("_DATABASE_URL")
            and key not in {"SECRET_KEY", "REDIS_URL", "DJANGO_SETTINGS_MODULE"}
        }
        env.update(ENV_FILE=str(self.env_file), VAR_DIR=str(self.var_dir))
        return subprocess.run(
            [str(REPO_ROOT / ".venv/bin/python"), "-m", project, *args],
            cwd=REPO_ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=COMMAND_BOUND_SECONDS,
        )


@contextmanager
def quickstart_running(folder: Path, **settings: str) -> Iterator[QuickStart]:
    """scripts/quickstart.sh, what `make run` runs after installing, in its own folder;
    `settings` are environment variables a test's quick start adds."""
    ports = {"news": free_port(), "compliance": free_port()}
    # Nothing of the test run's own configuration: the quick start makes its settings itself.
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.endswith("_DATABASE_URL")
        and key not in {"SECRET_KEY", "REDIS_URL", "SECURE_SSL_REDIRECT", "DJANGO_SETTINGS_MODULE"}
    }
    env.update(
        NEWS_PORT=str(ports["news"]),
        COMPLIANCE_PORT=str(ports["compliance"]),
        VAR_DIR=str(folder / "var"),
        ENV_FILE=str(folder / ".env"),
        INGEST_EVERY_SECONDS="3",
        # The editor's feed is served from loopback by the test.
        FETCH_ALLOW_PRIVATE_NETWORKS="true",
        **settings,
    )
    log = folder / "quickstart.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            ["bash", "scripts/quickstart.sh"],
            cwd=REPO_ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    started = QuickStart(
        process=process,
        log=log,
        var_dir=folder / "var",
        env_file=folder / ".env",
        news=f"http://127.0.0.1:{ports['news']}",
        compliance=f"http://127.0.0.1:{ports['compliance']}",
    )
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while "Quick start is running" not in started.output():
            if process.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the quick start did not come up:\n{started.output()[-4000:]}")
            time.sleep(0.5)
        yield started
    finally:
        # Ctrl-C as a user would: the script stops everything it started.
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGINT)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


@pytest.fixture(scope="module")
def quickstart(tmp_path_factory: pytest.TempPathFactory) -> Iterator[QuickStart]:
    with quickstart_running(tmp_path_factory.mktemp("quickstart")) as started:
        yield started


def wait_for(check, *, seconds: float, what: str) -> object:
    deadline = time.monotonic() + seconds
    while True:
        result = check()
        if result:
            return result
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not within {seconds} s")
        time.sleep(1)


def api_json(url: str, **kwargs) -> dict:
    return httpx.get(url, timeout=15, **kwargs).json()
