"""`python -m shared.wait_ready` (the web units' ExecStartPost) returns once /readyz answers 200,
asking with a host name the service answers for, and not before."""

import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.conftest import COMMAND_BOUND_SECONDS, REPO_ROOT


class Readiness(BaseHTTPRequestHandler):
    # Unready for the first probes, then ready; only for the host name it serves.
    probes = 0
    hosts: list[str] = []

    def do_GET(self) -> None:
        type(self).probes += 1
        type(self).hosts.append(self.headers["Host"])
        ok = self.headers["Host"] == "news.example" and type(self).probes > 2
        self.send_response(200 if ok else 503)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Readiness)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/readyz"
    httpd.shutdown()


def test_waits_until_ready_asking_for_an_allowed_host(server):
    done = subprocess.run(
        [sys.executable, "-m", "shared.wait_ready", server],
        cwd=REPO_ROOT,
        env={"ALLOWED_HOSTS": ".news.example,localhost"},
        timeout=COMMAND_BOUND_SECONDS,
    )

    assert done.returncode == 0
    assert Readiness.probes == 3
    assert set(Readiness.hosts) == {"news.example"}
