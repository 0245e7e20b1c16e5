"""A burst against the deployed stack (scripts/run_prod.sh: nginx, gunicorn, PostgreSQL, Redis):
100 anonymous clients, each from an address of its own, for 10 seconds on both services at
once. Every answer is 200, 304, 429 or 503 (never a 500, a 502 or a hung request), PostgreSQL
connections never exceed the budget of docs/operators-capacity.md, and the first request after
the burst succeeds. tests/shared/test_run_prod.py runs it on the stack it checks (one start of
the stack for both).
"""

import asyncio
import json
import os
import random
import ssl
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field

import httpx
import psycopg

from tests.conftest import REPO_ROOT
from tests.run_prod import Stack

CLIENTS_PER_SERVICE = 50
BURST_SECONDS = 10
# No request may take longer than this, burst or not.
CLIENT_TIMEOUT = 8
# docs/operators-capacity.md, with one web worker each (the stack of the tests): news 1 x 8
# (deploy/gunicorn/news.py), compliance 1 x 2 (deploy/gunicorn/compliance.py), the news task
# worker at most 4 (the default DB_POOL_MAX_SIZE).
CONNECTION_BUDGET = 1 * 8 + 1 * 2 + 4
ALLOWED = {200, 304, 429, 503}


@dataclass
class Answer:
    service: str
    status: int  # 0: no answer (a transport error or a timeout)
    seconds: float
    path: str = ""
    # For refusals (429, 503): what a client needs to act on them.
    content_type: str = ""
    retry_after: str = ""
    body: str = ""


@dataclass
class ConnectionWatch:
    """Samples pg_stat_activity for the stack's databases until stopped."""

    stack: Stack
    peak: int = 0
    samples: list[int] = field(default_factory=list)
    stopped: threading.Event = field(default_factory=threading.Event)

    def run(self) -> None:
        query = "SELECT count(*) FROM pg_stat_activity WHERE datname = ANY(%s)"
        with psycopg.connect(f"{self.stack.server}/postgres", autocommit=True) as connection:
            while not self.stopped.is_set():
                (count,) = connection.execute(query, [self.stack.databases]).fetchone()
                self.samples.append(count)
                self.peak = max(self.peak, count)
                time.sleep(0.05)


def _api_key(stack: Stack) -> str:
    created = subprocess.run(
        [
            *(sys.executable, "-m", "compliance_site", "create_api_key"),
            *("--name", "burst", "--rate-limit-per-minute", "1000000"),
        ],
        cwd=REPO_ROOT,
        env={
            # Each entry point names its own settings module.
            **{k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"},
            "COMPLIANCE_DATABASE_URL": f"{stack.server}/{stack.databases[1]}",
        },
        check=True,
        capture_output=True,
        text=True,
    )
    return created.stdout.strip().splitlines()[-1]


def _paths(service: str, rng: random.Random) -> str:
    """Cached pages and pages nginx has not seen (a distinct query string reaches Django)."""
    if service == "news":
        return rng.choice(
            [
                "/entries.json",
                "/llms.txt",
                f"/api/v1/entries?per_page={rng.randint(1, 50)}",
                f"/api/v1/entries?per_page={rng.randint(1, 50)}&page=2",
                "/index.md",
            ]
        )
    return rng.choice(
        [
            f"/api/v1/compliance/changes?limit={rng.randint(1, 100)}",
            "/api/v1/compliance/meta",
            "/api/v1/compliance/states/CA",
        ]
    )


async def _client(
    stack: Stack,
    service: str,
    address: str,
    key: str,
    trust: ssl.SSLContext,
    until: float,
    answers: list[Answer],
) -> None:
    rng = random.Random(address)
    headers = {"Authorization": f"Bearer {key}"} if service == "compliance" else {}
    transport = httpx.AsyncHTTPTransport(local_address=address, verify=trust)
    async with httpx.AsyncClient(
        transport=transport, timeout=CLIENT_TIMEOUT, headers=headers
    ) as client:
        while time.monotonic() < until:
            started = time.monotonic()
            path = _paths(service, rng)
            try:
                response = await client.get(stack.url(service, path))
            except httpx.HTTPError:
                answers.append(Answer(service, 0, time.monotonic() - started, path))
                continue
            answers.append(_answer(service, path, response, time.monotonic() - started))


def _answer(service: str, path: str, response: httpx.Response, seconds: float) -> Answer:
    answer = Answer(service, response.status_code, seconds, path)
    if response.status_code in (429, 503):
        answer.content_type = response.headers.get("content-type", "")
        answer.retry_after = response.headers.get("retry-after", "")
        answer.body = response.text
    return answer


def _assert_refusal_shape(answer: Answer) -> None:
    """A refusal says when to retry, in the error shape of the surface asked for."""
    assert answer.retry_after.isdigit() and int(answer.retry_after) >= 1, answer
    if answer.service == "compliance":
        error = json.loads(answer.body)["error"]
        assert error["code"] in {"rate_limit_exceeded", "service_unavailable"}, answer
        assert isinstance(error["message"], str)
    elif answer.path.startswith("/api/v1/"):
        body = json.loads(answer.body)
        assert body["error"]["type"] in {"rate_limited", "service_unavailable"}, answer
        assert body["meta"] == {"api_version": "v1"}
    else:
        assert answer.content_type.startswith("text/plain"), answer


async def _burst(stack: Stack, key: str, trust: ssl.SSLContext) -> list[Answer]:
    answers: list[Answer] = []
    until = time.monotonic() + BURST_SECONDS
    clients = [
        _client(stack, service, f"127.0.{1 + n // 200}.{10 + n % 200}", key, trust, until, answers)
        for n, service in enumerate(["news", "compliance"] * CLIENTS_PER_SERVICE)
    ]
    await asyncio.gather(*clients)
    return answers


async def _one_address(stack: Stack, key: str, trust: ssl.SSLContext) -> list[Answer]:
    """150 requests at once from one address to each service (past the edge's burst)."""
    headers = {"Authorization": f"Bearer {key}"}
    transport = httpx.AsyncHTTPTransport(
        local_address="127.0.0.3", verify=trust, limits=httpx.Limits(max_connections=150)
    )
    # Waiting for one of the client's own connections is not the service's time.
    timeout = httpx.Timeout(CLIENT_TIMEOUT, pool=60)
    async with httpx.AsyncClient(transport=transport, timeout=timeout) as client:

        async def one(service: str, path: str) -> Answer:
            started = time.monotonic()
            response = await client.get(
                stack.url(service, path), headers=headers if service == "compliance" else {}
            )
            return _answer(service, path, response, time.monotonic() - started)

        requests = [one("news", "/api/v1/entries?per_page=2") for _ in range(150)]
        requests += [one("news", "/index.md") for _ in range(150)]
        requests += [one("compliance", "/api/v1/compliance/meta") for _ in range(150)]
        return list(await asyncio.gather(*requests))


def a_burst_gets_only_fast_refusals_and_bounded_connections(stack: Stack) -> None:
    """The checks, on a stack that answers."""
    trust = ssl.create_default_context(cafile=str(stack.run_dir / "localhost.pem"))
    key = _api_key(stack)
    watch = ConnectionWatch(stack)
    watcher = threading.Thread(target=watch.run, daemon=True)
    watcher.start()
    try:
        answers = asyncio.run(_burst(stack, key, trust))
    finally:
        watch.stopped.set()
        watcher.join(timeout=5)

    # The burst is over: the next request of each service, pages nginx has not kept, succeeds.
    with httpx.Client(verify=trust, timeout=CLIENT_TIMEOUT) as client:
        after_news = client.get(stack.url("news", "/api/v1/entries?per_page=51"))
        after_compliance = client.get(
            stack.url("compliance", "/api/v1/compliance/changes?limit=101"),
            headers={"Authorization": f"Bearer {key}"},
        )

    # One address past its edge limits: nginx's own 429s, in each surface's shape.
    one_address = asyncio.run(_one_address(stack, key, trust))

    tally = Counter((a.service, a.status) for a in answers)
    print(f"answers: {sorted(tally.items())}; peak connections {watch.peak}")
    assert {a.status for a in answers} <= ALLOWED, sorted(tally.items())
    assert max(a.seconds for a in answers) < CLIENT_TIMEOUT
    # Both services served during the burst, and both shed load rather than queueing it.
    for service in ("news", "compliance"):
        assert tally[(service, 200)] > 0, service
    assert sum(tally[(s, c)] for s in ("news", "compliance") for c in (429, 503)) > 0
    for answer in answers + one_address:
        if answer.status in (429, 503):
            _assert_refusal_shape(answer)
    assert {a.status for a in one_address} <= ALLOWED
    for service in ("news", "compliance"):
        assert any(a.service == service and a.status == 429 for a in one_address), service
    assert watch.samples, "pg_stat_activity was sampled"
    assert watch.peak <= CONNECTION_BUDGET, watch.peak
    assert after_news.status_code == 200, after_news.text
    assert after_compliance.status_code == 200, after_compliance.text
