"""Slow request bodies cannot take a worker's slots: the body is read whole, within a deadline,
before the request reaches the concurrency bound; a body that trickles or never comes is
answered 408 and its connection closed, while other clients are served throughout. Against a
real uvicorn on a loopback port, with raw sockets as the slow clients."""

import asyncio
import socket
import threading
import time
from collections.abc import Iterator

import httpx
import pytest
import uvicorn
from starlette.types import Receive, Scope, Send

from shared.concurrency import ConcurrencyLimit
from shared.request_body import WholeBody
from tests.conftest import COMMAND_BOUND_SECONDS, free_port

# Long enough that, on a loaded machine, the probes below run while every slow client holds.
DEADLINE = 5
SLOTS = 4
SLOW_CLIENTS = 40


async def inner(scope: Scope, receive: Receive, send: Send) -> None:
    """Echoes what an application behind the middleware sees: the body and its length."""
    if scope["type"] != "http":
        return
    message = await receive()
    body = message.get("body", b"")
    length = dict(scope["headers"]).get(b"content-length", b"none")
    await asyncio.sleep(0.01)
    answer = b"%d %s" % (len(body), length)
    headers = [(b"content-type", b"text/plain"), (b"content-length", str(len(answer)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": answer})


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    app = WholeBody(
        ConcurrencyLimit(inner, limit=SLOTS), max_bytes=10_000, deadline_seconds=DEADLINE
    )
    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    running = uvicorn.Server(config)
    thread = threading.Thread(target=running.run, daemon=True)
    thread.start()
    while not running.started:
        assert thread.is_alive(), "uvicorn did not start"
        time.sleep(0.02)
    yield f"http://127.0.0.1:{port}"
    running.should_exit = True
    thread.join(timeout=10)


def _slow_client(
    base: str, request: bytes, trickle: bytes, answers: list[bytes], heads: threading.Semaphore
) -> None:
    """Sends the head (and says so on `heads`), then one byte of `trickle` every 0.3 s; keeps
    what the server says."""
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=DEADLINE + 10) as sock:
        sock.sendall(request)
        heads.release()
        received = b""
        sock.settimeout(0.3)
        for byte in trickle:
            try:
                sock.sendall(bytes([byte]))
                received += sock.recv(4096)
                if received:
                    break
            except TimeoutError:
                continue
            except OSError:
                break
        sock.settimeout(DEADLINE + 10)
        try:
            while chunk := sock.recv(4096):
                received += chunk
        except OSError:
            pass
        answers.append(received)


@pytest.mark.parametrize(
    ("request_head", "trickle"),
    [
        (b"POST /api/v1/auth/login HTTP/1.1\r\nHost: t\r\nContent-Length: 1000\r\n\r\n", b"{" * 60),
        (b"POST /mcp HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\n", b""),
        (
            b"GET /entries.json HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n",
            b"1\r\nx\r\n" * 20,
        ),
    ],
    ids=["trickled-login", "body-never-sent", "endless-chunked-get"],
)
def test_slow_bodies_hold_no_slot_and_are_closed_by_the_deadline(server, request_head, trickle):
    answers: list[bytes] = []
    heads = threading.Semaphore(0)
    slow = [
        threading.Thread(target=_slow_client, args=(server, request_head, trickle, answers, heads))
        for _ in range(SLOW_CLIENTS)
    ]
    started = time.monotonic()
    for thread in slow:
        thread.start()
    for _ in slow:
        assert heads.acquire(timeout=COMMAND_BOUND_SECONDS), "a slow client never connected"
    held_from = time.monotonic()

    # Ten times the slots are held by slow bodies: real requests are served all the same.
    probes = []
    with httpx.Client(base_url=server, timeout=10) as http:
        while not probes or time.monotonic() - started < DEADLINE - 0.5:
            probes.append(http.get("/api/v1/entries").status_code)
            probes.append(http.post("/api/v1/auth/login", json={"provider": "email"}).status_code)
    for thread in slow:
        thread.join(timeout=DEADLINE + 20)

    assert set(probes) == {200}, probes
    # The probes ran while the slow clients held their connections (else they proved nothing).
    assert held_from - started < DEADLINE, "the slow clients took the whole deadline to connect"
    assert len(answers) == SLOW_CLIENTS
    # Each slow connection got its 408 (and was closed) once the deadline passed, not later.
    assert all(answer.startswith(b"HTTP/1.1 408") for answer in answers), answers[:3]
    assert time.monotonic() - started < DEADLINE + 10


def test_a_chunked_body_reaches_the_application_whole_with_its_length(server):
    def chunks() -> Iterator[bytes]:
        yield b'{"provider": '
        yield b'"email"}'

    answer = httpx.post(f"{server}/api/v1/auth/login", content=chunks(), timeout=10)

    assert answer.request.headers["transfer-encoding"] == "chunked"
    assert answer.text == "21 21"
