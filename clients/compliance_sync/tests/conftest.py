"""A local HTTP server standing in for the compliance API: each test queues the answers."""

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


class FakeApi:
    def __init__(self) -> None:
        self.answers: list[tuple[int, dict[str, str], object]] = []
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/api/v1/compliance"

    def answer(self, status: int, body: object = None, **headers: str) -> None:
        self.answers.append((status, {k.replace("_", "-"): v for k, v in headers.items()}, body))

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                api.requests.append((self.path, dict(self.headers)))
                status, headers, body = api.answers.pop(0)
                payload = b"" if body is None else json.dumps(body).encode()
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: object) -> None:
                pass

        return Handler


@pytest.fixture
def fake_api() -> Iterator[FakeApi]:
    api = FakeApi()
    thread = threading.Thread(target=api.server.serve_forever, daemon=True)
    thread.start()
    yield api
    api.server.shutdown()
    api.server.server_close()
