"""A loopback SMTP server that stands in for the mail relay: it accepts every message and keeps
it, so a test can read the login code a service running in another process sent."""

import re
import socketserver
import threading
from collections.abc import Iterator

import pytest


class SmtpSink:
    def __init__(self) -> None:
        self.messages: list[str] = []
        sink = self

        class Handler(socketserver.StreamRequestHandler):
            def reply(self, line: str) -> None:
                self.wfile.write(f"{line}\r\n".encode())

            def handle(self) -> None:
                self.reply("220 sink ESMTP")
                while line := self.rfile.readline():
                    command = line.decode(errors="replace").strip().upper()
                    if command.startswith(("EHLO", "HELO")):
                        self.reply("250 sink")
                    elif command == "DATA":
                        self.reply("354 end with <CRLF>.<CRLF>")
                        body = []
                        while (data := self.rfile.readline()) not in (b".\r\n", b".\n", b""):
                            body.append(data.decode(errors="replace"))
                        sink.messages.append("".join(body))
                        self.reply("250 queued")
                    elif command == "QUIT":
                        self.reply("221 bye")
                        return
                    else:  # MAIL FROM, RCPT TO, RSET, NOOP
                        self.reply("250 ok")

        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    def login_code(self) -> str:
        """The six-digit code of the latest message (its subject says it)."""
        return re.search(r"^Subject: .*?(\d{6})\s*$", self.messages[-1], re.MULTILINE)[1]


@pytest.fixture
def smtp_sink() -> Iterator[SmtpSink]:
    sink = SmtpSink()
    sink.thread.start()
    yield sink
    sink.server.shutdown()
    sink.server.server_close()
