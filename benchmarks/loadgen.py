"""Load generation for the benchmark scripts: wrk against a URL, median of repeated runs."""

import json
import re
import shutil
import statistics
import subprocess
import tempfile
from dataclasses import dataclass

_UNITS = {"us": 1e-3, "ms": 1.0, "s": 1000.0}


@dataclass(frozen=True)
class LoadResult:
    requests_per_second: float
    p99_ms: float
    non_2xx: int
    # Answers a `check` script (wrk's Lua) looked at, and those it found wrong.
    checked: int = 0
    wrong: int = 0
    # The share of the machine's CPU time the hypervisor gave to other guests while the load
    # ran (/proc/stat's steal): on a shared machine a run's tail can be that, not the code.
    stolen: float = 0.0


def ensure_wrk() -> str:
    path = shutil.which("wrk")
    if path:
        return path
    subprocess.run(["apt-get", "install", "-y", "-qq", "wrk"], check=False, capture_output=True)
    path = shutil.which("wrk")
    if not path:
        subprocess.run(["apt-get", "update", "-qq"], check=False, capture_output=True)
        subprocess.run(["apt-get", "install", "-y", "-qq", "wrk"], check=True, capture_output=True)
        path = shutil.which("wrk")
    assert path, "wrk could not be installed"
    return path


# Lua that sums the checks of every thread and prints them as wrk() reads them. It goes after a
# `check` script whose `setup` keeps its threads in a `threads` local and whose threads count
# `checked` and `wrong`.
CHECKED_TOTALS = """
function done(summary, latency, requests)
  local total, bad = 0, 0
  for _, thread in ipairs(threads) do
    total = total + thread:get("checked")
    bad = bad + thread:get("wrong")
  end
  io.write(string.format("checked answers: %d wrong: %d\\n", total, bad))
end
"""


def wrk(
    url: str,
    *,
    headers: dict[str, str] | None = None,
    body: bytes | None = None,
    seconds: float = 8,
    connections: int = 16,
    threads: int = 2,
    runs: int = 3,
    check: str = "",
) -> LoadResult:
    """The median requests/second and p99 of `runs` wrk runs; with `body`, POSTs of it.
    `check`: Lua added to the script that prints "checked answers: N wrong: M" when done
    (summed over the runs)."""
    binary = ensure_wrk()
    header_args = [
        arg for name, value in (headers or {}).items() for arg in ("-H", f"{name}: {value}")
    ]
    results = []
    with tempfile.NamedTemporaryFile("w", suffix=".lua") as script:
        if body is not None:
            # wrk sends a request body only from a script; a Lua string holds any bytes.
            lua_string = json.dumps(body.decode(), ensure_ascii=False)
            script.write(f'wrk.method = "POST"\nwrk.body = {lua_string}\n')
        if body is not None or check:
            script.write(check)
            script.flush()
            header_args += ["-s", script.name]
        before = _cpu_times()
        for _ in range(runs):
            output = subprocess.run(
                [
                    binary,
                    f"-t{min(threads, connections)}",
                    f"-c{connections}",
                    f"-d{seconds}s",
                    "--latency",
                    *header_args,
                    url,
                ],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            results.append(_parse(output))
        stolen = _stolen_share(before, _cpu_times())
    return LoadResult(
        requests_per_second=statistics.median(r.requests_per_second for r in results),
        p99_ms=statistics.median(r.p99_ms for r in results),
        non_2xx=sum(r.non_2xx for r in results),
        checked=sum(r.checked for r in results),
        wrong=sum(r.wrong for r in results),
        stolen=stolen,
    )


def _cpu_times() -> list[int]:
    """The machine's CPU time so far by kind (user, nice, system, idle, iowait, irq, softirq,
    steal), in clock ticks; empty where /proc/stat is not there."""
    try:
        with open("/proc/stat") as stat:
            return [int(field) for field in stat.readline().split()[1:9]]
    except OSError:
        return []


def _stolen_share(before: list[int], after: list[int]) -> float:
    if len(before) < 8 or len(after) < 8:
        return 0.0
    spent = [a - b for a, b in zip(after, before, strict=True)]
    return spent[7] / sum(spent) if sum(spent) else 0.0


def _parse(output: str) -> LoadResult:
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", output)[1])
    value, unit = re.search(r"^\s+99%\s+([\d.]+)(us|ms|s)\s*$", output, re.M).groups()
    non_2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", output)
    checked = re.search(r"checked answers: (\d+) wrong: (\d+)", output)
    return LoadResult(
        rps,
        float(value) * _UNITS[unit],
        int(non_2xx[1]) if non_2xx else 0,
        checked=int(checked[1]) if checked else 0,
        wrong=int(checked[2]) if checked else 0,
    )
