"""Slow clients against a running news service, with a prober reading beside them.

100 connections that trickle a body or never send it, on `POST /mcp`, `POST
/api/v1/auth/login` and a `GET` with a chunked body that never ends, and some that trickle their
headers and never end them; each one, once the server
closes it, comes back at once, for as long as the attack lasts. Meanwhile a prober reads
uncached `/api/v1/entries` and `/entries.json` (a conditional header sends them past every
cache to Django) and calls MCP `tools/list`, and another asks `/readyz`. The checks: the prober
is served (>= 95%), readiness says unready whenever the prober was not, and every slow
connection is closed within the deadline. Used straight on gunicorn
(tests/news/serving/test_slow_clients.py) and through nginx (tests/shared/test_run_prod.py).
"""

import asyncio
import itertools
import ssl
import time
import uuid
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httpx

SLOW_CONNECTIONS = 100
# One byte from each slow client this often: far inside any gap timeout between reads.
TRICKLE_SECONDS = 0.5
PROBE_TIMEOUT = 5.0
READY_TIMEOUT = 2.0
# The server's clock and ours start a moment apart, and a loaded machine schedules late.
CLOSE_GRACE_SECONDS = 2.0
KINDS = ("mcp", "login", "chunked", "headers")
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


@dataclass
class Slow:
    kind: str
    seconds: float
    status_line: bytes


@dataclass
class Probe:
    at: float
    what: str
    ok: bool
    detail: str = ""


@dataclass
class Attack:
    slow: list[Slow] = field(default_factory=list)
    probes: list[Probe] = field(default_factory=list)
    readiness: list[Probe] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)


def _head(kind: str, host: str) -> tuple[bytes, bytes]:
    """The request head of a slow client and what it trickles after it (empty: nothing)."""
    if kind == "mcp":
        head = (
            f"POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            "Accept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n"
        )
        return head.encode(), b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list"' + b" " * 950
    if kind == "login":
        head = (
            f"POST /api/v1/auth/login HTTP/1.1\r\nHost: {host}\r\n"
            "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
        )
        return head.encode(), b""
    if kind == "headers":
        return f"GET /entries.json HTTP/1.1\r\nHost: {host}\r\n".encode(), b"X-A: b\r\n" * 10_000
    head = f"GET /api/v1/entries HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\n\r\n"
    return head.encode(), b"1\r\na\r\n" * 10_000


async def _slow_client(
    base: str,
    kind: str,
    local: str,
    tls: ssl.SSLContext | None,
    until: float,
    hold: float,
    attack: Attack,
) -> None:
    parts = urlsplit(base)
    while time.monotonic() < until:
        started = time.monotonic()
        reader, writer = await asyncio.open_connection(
            parts.hostname, parts.port, ssl=tls, local_addr=(local, 0)
        )
        head, trickle = _head(kind, parts.netloc)
        writer.write(head)
        received = b""
        sent = 0
        # Until the server closes the connection (its answer, then EOF), or far past the deadline.
        while time.monotonic() - started < hold:
            try:
                chunk = await asyncio.wait_for(reader.read(4096), TRICKLE_SECONDS)
            except TimeoutError:
                if sent < len(trickle):
                    step = trickle[sent : sent + (6 if kind == "chunked" else 1)]
                    writer.write(step)
                    sent += len(step)
                continue
            except (ConnectionError, ssl.SSLError):
                break
            if not chunk:
                break
            received += chunk
        attack.slow.append(Slow(kind, time.monotonic() - started, received.split(b"\r\n")[0]))
        writer.close()


async def _prober(
    base: str, addresses: itertools.cycle, tls: ssl.SSLContext | bool, until: float, a: Attack
) -> None:
    what = itertools.cycle(["entries", "entries.json", "tools/list"])
    while time.monotonic() < until:
        asked = next(what)
        transport = httpx.AsyncHTTPTransport(local_address=next(addresses), verify=tls)
        at = time.monotonic()
        async with httpx.AsyncClient(transport=transport, timeout=PROBE_TIMEOUT) as client:
            try:
                response = await _probe(client, base, asked)
                ok, detail = response.status_code == 200, f"{response.status_code}"
            except httpx.HTTPError as exc:
                ok, detail = False, type(exc).__name__
        a.probes.append(Probe(at, asked, ok, detail))
        await asyncio.sleep(0.05)


async def _probe(client: httpx.AsyncClient, base: str, asked: str) -> httpx.Response:
    # A conditional header no copy matches sends the read past nginx's cache and the response
    # cache to Django: the prober measures the workers, not a kept copy.
    uncached = {"If-None-Match": f'"{uuid.uuid4().hex}"'}
    if asked == "entries":
        return await client.get(f"{base}/api/v1/entries?per_page=5", headers=uncached)
    if asked == "entries.json":
        return await client.get(f"{base}/entries.json", headers=uncached)
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    return await client.post(f"{base}/mcp", json=call, headers=MCP_HEADERS)


async def _readiness(
    base: str, local: str, tls: ssl.SSLContext | bool, until: float, a: Attack
) -> None:
    transport = httpx.AsyncHTTPTransport(local_address=local, verify=tls)
    async with httpx.AsyncClient(transport=transport, timeout=READY_TIMEOUT) as client:
        while time.monotonic() < until:
            at = time.monotonic()
            try:
                ok = (await client.get(f"{base}/readyz")).status_code == 200
            except httpx.HTTPError:
                ok = False
            a.readiness.append(Probe(at, "readyz", ok))
            await asyncio.sleep(0.25)


async def _attack(base: str, seconds: float, deadline: float, tls: ssl.SSLContext | None) -> Attack:
    attack = Attack()
    until = time.monotonic() + seconds
    verify: ssl.SSLContext | bool = tls if tls is not None else False
    # Every client from an address of its own (nginx's per-address limits count each apart).
    slow = [
        _slow_client(
            base, KINDS[n % len(KINDS)], f"127.0.9.{n + 10}", tls, until, 3 * deadline, attack
        )
        for n in range(SLOW_CONNECTIONS)
    ]
    addresses = itertools.cycle(f"127.0.10.{n}" for n in range(10, 250))
    await asyncio.gather(
        *slow,
        _prober(base, addresses, verify, until, attack),
        _readiness(base, "127.0.11.10", verify, until, attack),
    )
    return attack


def slow_clients_cannot_take_the_service_down(
    base: str, *, deadline: float, seconds: float, tls: ssl.SSLContext | None = None
) -> Attack:
    """The checks of the module docstring; returns what was seen, for the caller's own."""
    attack = asyncio.run(_attack(base, seconds, deadline, tls))
    # The figures, for a run with -s (docs/decisions.md quotes them).
    print(
        f"slow clients: {len(attack.slow)} connections closed after "
        f"{min(s.seconds for s in attack.slow):.1f}-{max(s.seconds for s in attack.slow):.1f} s; "
        f"prober {sum(p.ok for p in attack.probes)}/{len(attack.probes)} served; "
        f"readiness {sum(r.ok for r in attack.readiness)}/{len(attack.readiness)} ready"
    )

    served = [probe for probe in attack.probes if probe.ok]
    failed = [probe for probe in attack.probes if not probe.ok]
    assert len(served) >= 0.95 * len(attack.probes), failed
    # Throughout: the prober was served in every quarter of the attack (a probe takes a TLS
    # handshake and more than a second on a loaded machine, so no count is asked for).
    for quarter in range(4):
        begin = attack.started + quarter * seconds / 4
        assert any(p.ok and begin <= p.at < begin + seconds / 4 for p in attack.probes), quarter
    for probe in failed:
        nearby = [r for r in attack.readiness if abs(r.at - probe.at) <= PROBE_TIMEOUT + 1]
        assert any(not r.ok for r in nearby), (probe, nearby)
    # Every slow connection closed, and within the deadline: at least one round of each kind.
    assert len(attack.slow) >= SLOW_CONNECTIONS
    assert {slow.kind for slow in attack.slow} == set(KINDS)
    late = [slow for slow in attack.slow if slow.seconds > deadline + CLOSE_GRACE_SECONDS]
    assert not late, late[:5]
    return attack
