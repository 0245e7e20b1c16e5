"""Fixtures of the webhook tests: receivers on loopback that answer 200, 500, too late or not
at all, the verification code exactly as docs/compliance-integrators.md shows it, and a clock
the tests move instead of sleeping."""

import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from django.utils import timezone

from compliance_site.webhooks.signing import HEADER
from tests.support.localserver import LocalServer

DOCS = Path(__file__).resolve().parents[3] / "docs" / "compliance-integrators.md"


@pytest.fixture
def verify_signature() -> Callable[..., bool]:
    """The integrators' verification function, run from the docs' own code block."""
    text = DOCS.read_text()
    section = text[text.index("**Verifying a delivery.**") :]
    (code,) = re.findall(r"```python\n(.*?)```", section, re.S)[:1]
    namespace: dict = {}
    exec(compile(code, str(DOCS), "exec"), namespace)  # noqa: S102 - our own docs
    return namespace["verify_signature"]


@dataclass
class Received:
    path: str
    signature: str
    body: bytes

    @property
    def json(self) -> dict:
        return json.loads(self.body)


@dataclass
class Receivers:
    """A loopback server whose paths behave as a test sets them: `ok`, `fail` (500), `slow`
    (answers after the send's deadline) or `close` (hangs up without answering)."""

    server: LocalServer
    behaviour: dict[str, str] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def url(self, path: str, behaviour: str = "ok") -> str:
        self.set(path, behaviour)
        return self.server.url(path)

    def set(self, path: str, behaviour: str) -> None:
        self.behaviour[path] = behaviour
        self.server.route(path, self._handler(path))

    def received(self, path: str) -> list[Received]:
        """Every POST that reached `path`, answered or not, in arrival order."""
        return [
            Received(p, headers.get(HEADER, ""), body)
            for method, p, headers, body in self.server.seen
            if method == "POST" and p == path
        ]

    def _handler(self, path: str) -> Callable[[BaseHTTPRequestHandler], None]:
        def handle(request: BaseHTTPRequestHandler) -> None:
            behaviour = self.behaviour[path]
            if behaviour == "close":
                request.close_connection = True
                return
            if behaviour == "slow":
                # Past the send's deadline (1 s in the timeout test); teardown cuts it short.
                self.server.stopping.wait(3)
            status = 500 if behaviour == "fail" else 200
            request.send_response(status)
            request.send_header("Content-Length", "2")
            request.end_headers()
            request.wfile.write(b"ok")

        return handle


@pytest.fixture
def receivers(local_server: LocalServer, settings) -> Receivers:
    # The receivers live on 127.0.0.1, which production refuses.
    settings.FETCH_ALLOW_PRIVATE_NETWORKS = True
    # Ample for loopback even on a busy machine; the timeout test shortens it.
    settings.COMPLIANCE_WEBHOOK_TIMEOUT_SECONDS = 5
    return Receivers(local_server)


@dataclass
class Clock:
    now: datetime

    def __call__(self) -> datetime:
        return self.now

    def move(self, **delta: float) -> datetime:
        self.now += timedelta(**delta)
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock(timezone.now().replace(microsecond=0))
