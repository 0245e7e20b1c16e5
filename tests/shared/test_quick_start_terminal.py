"""What a person sees in the terminal of `make run`: a taken port refused at once, naming the
port and the variable that moves it; readable log lines at the level LOG_LEVEL says, whatever
level a library sets on its own logger; JSON lines stay the default; no favicon 404s."""

import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator

import pytest

from tests.conftest import COMMAND_BOUND_SECONDS, REPO_ROOT, free_port


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A port another program listens on."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        yield listener.getsockname()[1]


def ports_free(*assignments: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "scripts/ports_free.py", *assignments],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=COMMAND_BOUND_SECONDS,
    )


def test_free_ports_pass(taken_port):
    done = ports_free(f"NEWS_PORT={free_port()}", f"COMPLIANCE_PORT={free_port()}")
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""


def test_a_taken_port_is_named_with_the_variable_that_moves_it(taken_port):
    done = ports_free(f"NEWS_PORT={free_port()}", f"COMPLIANCE_PORT={taken_port}")
    assert done.returncode == 1
    assert f"port {taken_port} is already in use" in done.stderr
    assert "make run COMPLIANCE_PORT=PORT" in done.stderr
    assert "NEWS_PORT" not in done.stderr


@pytest.mark.parametrize("value", ["http", "0", "70000", ""])
def test_a_value_that_is_no_port_is_refused(value):
    done = ports_free(f"NEWS_PORT={value}")
    assert done.returncode == 1
    assert "is not a port number" in done.stderr


def test_make_run_refuses_a_taken_news_port_before_installing(taken_port, tmp_path):
    if not shutil.which("make"):
        pytest.skip("make is not installed")
    venv = tmp_path / "venv"
    done = subprocess.run(
        [
            "make",
            "run",
            f"NEWS_PORT={taken_port}",
            f"COMPLIANCE_PORT={free_port()}",
            f"VENV={venv}",
        ],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=COMMAND_BOUND_SECONDS,
    )
    assert done.returncode != 0
    assert f"port {taken_port} is already in use" in done.stderr
    assert "NEWS_PORT=" in done.stderr
    # Refused before anything else: no virtualenv was made, nothing was installed.
    assert not venv.exists()


def log_lines(**env: str) -> str:
    """stderr of a management command that logs through a library logger set to INFO (as
    django-tasks' worker sets its own), with the environment given."""
    script = (
        "import logging\n"
        "chatty = logging.getLogger('django_tasks')\n"
        "chatty.setLevel(logging.INFO)\n"
        "chatty.info('task started')\n"
        "chatty.warning('task %s is slow', 7)\n"
    )
    environment = {
        **{k: v for k, v in os.environ.items() if not k.startswith("LOG_")},
        "ENV_FILE": "",
        **env,
    }
    environment.pop("DJANGO_SETTINGS_MODULE", None)
    done = subprocess.run(
        [sys.executable, "-m", "news_site", "shell", "-v", "0", "-c", script],
        cwd=REPO_ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=COMMAND_BOUND_SECONDS,
    )
    assert done.returncode == 0, done.stderr
    return done.stderr


def test_the_quick_start_logs_readable_lines_at_log_level():
    stderr = log_lines(LOG_LEVEL="WARNING", LOG_FORMAT="text")
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    clock, level, logger, message = lines[0].split(" ", 3)
    assert len(clock) == 8 and clock[2] == clock[5] == ":"
    assert (level, logger, message) == ("WARNING", "django_tasks:", "task 7 is slow")


def test_json_lines_stay_the_default_and_log_level_still_holds():
    stderr = log_lines(LOG_LEVEL="WARNING")
    entries = [json.loads(line) for line in stderr.strip().splitlines()]
    assert [entry["message"] for entry in entries] == ["task 7 is slow"]
    assert entries[0]["level"] == "WARNING" and entries[0]["service"] == "news"


def test_info_shows_when_log_level_asks_for_it():
    stderr = log_lines(LOG_LEVEL="INFO", LOG_FORMAT="text")
    assert "INFO    django_tasks: task started" in stderr


def test_an_unknown_log_format_is_refused_with_its_name():
    environment = {**os.environ, "ENV_FILE": "", "LOG_FORMAT": "xml"}
    environment.pop("DJANGO_SETTINGS_MODULE", None)
    done = subprocess.run(
        [sys.executable, "-m", "compliance_site", "check"],
        cwd=REPO_ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=COMMAND_BOUND_SECONDS,
    )
    assert done.returncode != 0
    assert "LOG_FORMAT must be one of json, text, not 'xml'" in done.stderr


def test_the_favicon_is_served(client):
    # Whichever service the run's settings name: both serve shared/root_files/ at the root.
    answer = client.get("/favicon.ico")
    assert answer.status_code == 200
    assert answer["Content-Type"] == "image/x-icon"
    body = b"".join(answer.streaming_content)
    assert body[:4] == b"\x00\x00\x01\x00"
