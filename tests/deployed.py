"""A service run as deployed: gunicorn with its config from deploy/gunicorn/, several workers,
and the JSON lines it writes on stderr kept for the test to read."""

import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from tests.conftest import REPO_ROOT, STARTUP_BOUND_SECONDS, free_port

_BIND_ENV = {"news": "NEWS_BIND", "compliance": "COMPLIANCE_BIND"}


class DeployedGunicorn:
    def __init__(self, service: str, env: dict[str, str], log_dir: Path, workers: int = 2):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = log_dir / f"{service}-{self.port}.log"
        self._log = self.log_path.open("w")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", f"deploy/gunicorn/{service}.py"],
            cwd=REPO_ROOT,
            env={
                **os.environ,
                **env,
                _BIND_ENV[service]: f"127.0.0.1:{self.port}",
                "WEB_CONCURRENCY": str(workers),
            },
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )

    def wait_ready(self, path: str = "/healthz", timeout: float = STARTUP_BOUND_SECONDS) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"gunicorn exited: {self.log_path.read_text()[-2000:]}")
            try:
                httpx.get(self.url + path, timeout=2)
                return
            except httpx.TransportError:
                time.sleep(0.2)
        raise RuntimeError("gunicorn did not start in time")

    def wait_for_lines(
        self, message: str, count: int, timeout: float = STARTUP_BOUND_SECONDS
    ) -> None:
        """Until `count` lines say `message` (each worker says when it is ready)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if sum(entry["message"] == message for entry in self.log_entries()) >= count:
                return
            time.sleep(0.2)
        raise RuntimeError(f"fewer than {count} lines said {message!r}")

    def wait_for_workers(self, count: int, timeout: float = STARTUP_BOUND_SECONDS) -> None:
        """Until `count` different workers have answered (sync workers: a busy one leaves the
        next connection to another)."""
        deadline = time.monotonic() + timeout
        with ThreadPoolExecutor(max_workers=count * 2) as pool:
            while time.monotonic() < deadline:
                list(pool.map(lambda _: httpx.get(f"{self.url}/healthz"), range(count * 4)))
                pids = {
                    entry["pid"]
                    for entry in self.log_entries()
                    if entry["logger"] == "access" and entry["path"] == "/healthz"
                }
                if len(pids) >= count:
                    return
        raise RuntimeError(f"fewer than {count} workers answered")

    def access_lines(self, request_ids: list[str], timeout: float = 10) -> dict[str, dict]:
        """The access line of each request, by id. An ASGI app writes it once the last byte is
        sent, so it can come a moment after the client has the response."""
        deadline = time.monotonic() + timeout
        while True:
            lines = {
                entry["request_id"]: entry
                for entry in self.log_entries()
                if entry["logger"] == "access" and entry["request_id"] in request_ids
            }
            if len(lines) == len(set(request_ids)) or time.monotonic() > deadline:
                return lines
            time.sleep(0.1)

    def log_entries(self) -> list[dict]:
        """Every line written so far, each parsed as JSON (a line that is not fails the test)."""
        self._log.flush()
        return [json.loads(line) for line in self.log_path.read_text().splitlines() if line]

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._log.close()
