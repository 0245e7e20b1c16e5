"""Cache-busting burst benchmark (issue 24): 150 anonymous clients for 10 s through the deploy
stack (`scripts/run_prod.sh`: nginx with TLS, gunicorn, PostgreSQL, Redis, the demo data), half
on /entries.json and half on /api/v1/entries, every request with a query parameter of its own
(`?_=<unique>`, as XHR libraries and crawlers add). nginx's per-address limits are left out
(RUN_PROD_EDGE_LIMITS=off): wrk's connections stand for 150 readers at 150 addresses.

No view reads `_`, so nginx, which keys each surface's copies on the parameters it reads
(news_site/cache_keys.py), answers every one from the copy of the page; the response cache in
each worker keys the same way. Every answer is checked: a 200 counts as served only when its
body is the page (the envelope of the surface, with entries in it); anything else is reported
apart. The answers' cache statuses in nginx's access log are reported too (HIT: nginx's copy).

Targets: >= 90% of answers served 200, p99 of those (nginx's $request_time, to the millisecond:
0 is under 1 ms) < 100 ms, every URL
answering 200 again < 2 s after the burst. For reference, in the same run, the same burst on a
static file the same nginx serves (wrk's p99 of all answers on both). The machine is shared;
figures are one run's.
Run: `.venv/bin/python benchmarks/burst_junk_bench.py [--seconds 10] [--connections 150]`
(BENCH_REDIS_URL names the Redis database the stack may use).
"""

import argparse
import os
import re
import ssl
import sys
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.burst_bench import (
    RunProd,
    recovery_figure,
    served_p99_ms,
    status_counts,
    wrk_scripted,
)
from benchmarks.results import Figure, record

SERVED_SHARE_TARGET = 0.90
P99_TARGET_MS = 100.0
# Per path: how a page's body opens, and a field every entry carries.
PAGE_SHAPES = {
    "/entries.json": ('{"entries": [{"id": ', '"url": "'),
    "/api/v1/entries": ('{"data":[{"id":', '"url":"'),
}
PATHS = tuple(PAGE_SHAPES)
# Served by nginx from disk (collectstatic), through the same server block.
STATIC_PATH = "/static/admin/css/base.css"

# A unique parameter on every request; each answer's status counted, and a 200 whose body is
# not the page (it must start with args[1] and hold args[2]) counted as "bad".
WRK_SCRIPT = """
local threads = {}
function setup(thread)
  thread:set("id", #threads)
  table.insert(threads, thread)
end
function init(args)
  counts, bad, n = {}, 0, 0
  run, prefix, marker = args[1], args[2], args[3]
end
function request()
  n = n + 1
  return wrk.format(nil, wrk.path .. "?_=" .. run .. "-" .. id .. "-" .. n)
end
function response(status, headers, body)
  counts[status] = (counts[status] or 0) + 1
  if status == 200 and (body:sub(1, #prefix) ~= prefix or not body:find(marker, 1, true)) then
    bad = bad + 1
  end
end
function done(summary, latency, requests)
  for _, thread in ipairs(threads) do
    for status, count in pairs(thread:get("counts")) do
      io.write(string.format("status %d %d\\n", status, count))
    end
    io.write(string.format("bad %d\\n", thread:get("bad")))
  end
end
"""


def page_shape(path: str, body: bytes) -> tuple[str, str]:
    """What every 200 of `path` must look like, checked on a first answer: the surface's
    envelope opening on an entry, and a field every entry has."""
    shape = PAGE_SHAPES[path]
    if not body.startswith(shape[0].encode()) or shape[1].encode() not in body:
        raise RuntimeError(f"{path} is not a page with entries: {body[:200]!r}")
    return shape


def static_shape(body: bytes) -> tuple[str, str]:
    """The reference file's opening bytes and a line from its middle (ASCII: base.css)."""
    text = body.decode()
    middle = text[len(text) // 2 :].splitlines()[1]
    return text[:14], middle


def wrk_junk(
    url: str, connections: int, seconds: int, shape: tuple[str, str]
) -> tuple[Counter, float]:
    """Every answer's status counted (and bad bodies), and the p99 of all answers in ms."""
    output = wrk_scripted(
        WRK_SCRIPT,
        [
            *("-t2", f"-c{connections}", f"-d{seconds}s", "--timeout", "10s", "--latency"),
            *(url, "--", uuid.uuid4().hex[:8], *shape),
        ],
    )
    counts = status_counts(output)
    counts["bad"] = sum(int(n) for n in re.findall(r"^bad (\d+)$", output, re.MULTILINE))
    value, unit = re.search(r"^\s+99%\s+([\d.]+)(us|ms|s)\s*$", output, re.M).groups()
    return counts, float(value) * {"us": 1e-3, "ms": 1.0, "s": 1000.0}[unit]


def recovery_seconds(stack: RunProd, trust: ssl.SSLContext) -> float:
    """From the end of the burst until each URL, with a parameter never asked before, is
    served its page."""
    started = time.monotonic()
    pending = set(PATHS)
    with httpx.Client(verify=trust, timeout=10) as client:
        while pending and time.monotonic() - started < 60:
            for path in list(pending):
                response = client.get(stack.url("news", f"{path}?_=recovery-{uuid.uuid4().hex}"))
                if response.status_code == 200:
                    pending.discard(path)
            if pending:
                time.sleep(0.02)
    return time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=150)
    args = parser.parse_args()

    stack = RunProd(edge_limits=False)
    try:
        stack.wait_ready(timeout=900)
        trust = ssl.create_default_context(cafile=str(stack.run_dir / "localhost.pem"))
        with httpx.Client(verify=trust, timeout=10) as client:
            shapes = {
                path: page_shape(path, client.get(stack.url("news", path)).content)
                for path in PATHS
            }
        (stack.run_dir / "news.access.log").write_text("")
        load = os.getloadavg()
        results: dict[str, tuple[Counter, float]] = {}

        def run(path: str) -> None:
            per_path = args.connections // len(PATHS)
            url = stack.url("news", path)
            results[path] = wrk_junk(url, per_path, args.seconds, shapes[path])

        threads = [threading.Thread(target=run, args=(path,)) for path in PATHS]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        recovery = recovery_seconds(stack, trust)
        p99 = served_p99_ms(stack)["news"]
        cache_statuses = Counter(
            re.findall(r" cache=(\S+) ", (stack.run_dir / "news.access.log").read_text())
        )
        # The reference: the same burst, in the same run, on a file the same nginx serves
        # from disk.
        static_url = stack.url("news", STATIC_PATH)
        with httpx.Client(verify=trust, timeout=10) as client:
            shape = static_shape(client.get(static_url).content)
        static, static_p99 = wrk_junk(static_url, args.connections, args.seconds, shape)
    finally:
        stack.stop()

    total: Counter = sum((counts for counts, _ in results.values()), Counter())
    p99_all = max(p99_of_path for _, p99_of_path in results.values())
    answers = sum(n for status, n in total.items() if status != "bad") or 1
    served = total[200] - total["bad"]
    share = served / answers
    for path in PATHS:
        counts, p99_of_path = results[path]
        print(f"{path}: {dict(sorted(counts.items(), key=str))}, p99 (wrk) {p99_of_path:.1f} ms")
    print(
        f"{STATIC_PATH} (static): {dict(sorted(static.items(), key=str))}, p99 {static_p99:.1f} ms"
    )
    print(f"nginx cache statuses of the burst's answers: {dict(cache_statuses.most_common())}")
    print(
        f"unique-parameter burst: {answers} answers in {args.seconds} s at {args.connections} "
        f"connections; served 200 {100 * share:.1f}% (bad bodies {total['bad']}), "
        f"503 {100 * total[503] / answers:.1f}%; p99 of served {p99:.1f} ms; "
        f"p99 of all answers (wrk) {p99_all:.1f} ms against {static_p99:.1f} ms static "
        f"({p99_all / static_p99:.1f}x); recovery {recovery:.2f} s; "
        f"load average before {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}",
        flush=True,
    )
    label = f"burst_junk_bench ({args.connections} clients, unique parameter)"
    figures = [
        Figure(
            label,
            f"answers in {args.seconds} s served 200 with the page",
            f"{100 * share:.1f}% of {answers}",
            target=f">= {SERVED_SHARE_TARGET:.0%}, no bad bodies",
            met=share >= SERVED_SHARE_TARGET and total["bad"] == 0,
        ),
        Figure(
            label,
            "p99 of served (200) requests",
            f"{p99:.1f} ms",
            target=f"< {P99_TARGET_MS:.0f} ms",
            met=p99 < P99_TARGET_MS,
        ),
        Figure(
            label,
            "p99 of all answers (wrk), against the same burst on a static file",
            f"{p99_all:.1f} ms",
            ratio=f"{p99_all / static_p99:.1f}x static's {static_p99:.1f} ms",
        ),
        recovery_figure(label, recovery),
    ]
    record(*figures)
    return 0 if all(f.met is not False for f in figures) else 1


if __name__ == "__main__":
    sys.exit(main())
