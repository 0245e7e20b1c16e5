"""A loopback HTTP server that stands in for remote sites in tests (feeds, government pages,
model APIs): each test chooses the answers, and the server records every request."""

import contextlib
import threading
from collections.abc import Callable, Iterator
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

Route = Callable[[BaseHTTPRequestHandler], None]


class LocalServer:
    def __init__(self, host: str = "127.0.0.1") -> None:
        self.routes: dict[str, Route] = {}
        # (method, path, headers, body) of every request, in order.
        self.seen: list[tuple[str, str, Message, bytes]] = []
        # Set at teardown so handlers that drip bytes stop instead of outliving the test.
        self.stopping = threading.Event()
        local = self

        class Handler(BaseHTTPRequestHandler):
            def _handle(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                local.seen.append((method, self.path, self.headers, body))
                route = local.routes.get(self.path.split("?", 1)[0])
                if route is None:
                    self.send_error(404)
                    return
                # The client hangs up on purpose in the timeout and size-cap tests.
                with contextlib.suppress(OSError):
                    route(self)

            def do_GET(self) -> None:
                self._handle("GET")

            def do_POST(self) -> None:
                self._handle("POST")

            def log_message(self, format: str, *args: object) -> None:
                pass  # keep pytest output readable

        # Another loopback address (127.0.0.2, ...) is another host to a client.
        self.host = host
        self.httpd = ThreadingHTTPServer((host, 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        # A short poll interval keeps shutdown (each test's teardown) quick.
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def url(self, path: str) -> str:
        return f"http://{self.host}:{self.port}{path}"

    def requests_to(self, path: str) -> list[tuple[str, str, Message, bytes]]:
        return [seen for seen in self.seen if seen[1].split("?", 1)[0] == path]

    def headers_seen(self) -> list[Message]:
        return [headers for _method, _path, headers, _body in self.seen]

    def respond(
        self,
        path: str,
        status: int = 200,
        body: bytes = b"",
        headers: dict[str, str] | None = None,
        content_length: bool = True,
    ) -> None:
        def route(request: BaseHTTPRequestHandler) -> None:
            request.send_response(status)
            for name, value in (headers or {}).items():
                request.send_header(name, value)
            if content_length:
                request.send_header("Content-Length", str(len(body)))
            request.end_headers()
            request.wfile.write(body)

        self.routes[path] = route

    def redirect(self, path: str, status: int, location: str) -> None:
        self.respond(path, status, headers={"Location": location})

    def route(self, path: str, handler: Route) -> None:
        self.routes[path] = handler


@pytest.fixture
def local_server() -> Iterator[LocalServer]:
    local = LocalServer()
    local.thread.start()
    yield local
    local.stopping.set()
    local.httpd.shutdown()
    local.httpd.server_close()
