"""Fresh clone to the `make run` banner: wall time, the CPU time it took (what a quiet machine
would need at least), the size of `.venv`, semantic search answering, and a taken port refused.

    python benchmarks/install_bench.py [--python /path/to/python3.1x] [--cold] [--keep]

It clones the checkout's HEAD (commit first) into a temporary folder, runs `make run` there on
free ports with pip's cache as it is (warm after any earlier install), or with `--cold` an
empty one (PIP_CACHE_DIR in a new folder: every package downloaded), and stops it after the
checks. Targets (issue 26): banner <= 150 s with the cache warm and <= 5 min cold on a quiet
2-core machine, `.venv` <= 600 MB, `meta.mode: semantic`, a taken news port refused within
10 s naming it.
The machine's load average is printed beside the time: on a shared machine the wall time
follows it, the CPU time does not.
"""

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.results import Figure, record

REPO_ROOT = Path(__file__).resolve().parents[1]
BANNER = "Quick start is running"
TICKS = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def tree_cpu_seconds(root: int) -> float:
    """CPU time of `root` and every process under it, including children they have already
    waited for (a finished pip counts in its parent's cutime)."""
    stats: dict[int, list[str]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            stats[int(stat.parent.name)] = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
    children: dict[int, list[int]] = {}
    for pid, fields in stats.items():
        children.setdefault(int(fields[1]), []).append(pid)
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        if pid in stats:
            # utime, stime, cutime, cstime: fields 14-17 of /proc/PID/stat.
            total += sum(int(value) for value in stats[pid][11:15])
        todo.extend(children.get(pid, []))
    return total / TICKS


def du_megabytes(path: Path) -> float:
    done = subprocess.run(["du", "-sm", str(path)], capture_output=True, text=True, check=True)
    return float(done.stdout.split()[0])


def taken_port_refusal(clone: Path, python: str | None) -> float:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        started = time.monotonic()
        done = subprocess.run(
            ["make", "run", f"NEWS_PORT={port}", f"COMPLIANCE_PORT={free_port()}"]
            + ([f"PYTHON={python}"] if python else []),
            cwd=clone,
            capture_output=True,
            text=True,
            timeout=60,
        )
        elapsed = time.monotonic() - started
    if done.returncode == 0 or f"port {port}" not in done.stderr:
        raise SystemExit(f"a taken port was not refused by name: {done.stderr}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", help="the interpreter for make run (PYTHON=...)")
    parser.add_argument("--cold", action="store_true", help="pip's cache empty")
    parser.add_argument("--keep", action="store_true", help="keep the clone")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="install-bench-"))
    clone = folder / "clone"
    subprocess.run(["git", "clone", "-q", str(REPO_ROOT), str(clone)], check=True)
    news_port, compliance_port = free_port(), free_port()
    command = ["make", "run", f"NEWS_PORT={news_port}", f"COMPLIANCE_PORT={compliance_port}"]
    if args.python:
        command.append(f"PYTHON={args.python}")
    env = dict(os.environ)
    if args.cold:
        env["PIP_CACHE_DIR"] = str(folder / "pip-cache")
    log = folder / "run.log"
    started = time.monotonic()
    with log.open("w") as sink:
        run = subprocess.Popen(
            command,
            cwd=clone,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        cpu = 0.0
        while BANNER not in log.read_text(errors="replace"):
            if run.poll() is not None or time.monotonic() - started > 1800:
                print(log.read_text(errors="replace"))
                raise SystemExit("make run stopped or took over 30 minutes")
            cpu = tree_cpu_seconds(run.pid)
            time.sleep(0.2)
        wall = time.monotonic() - started
        cpu = max(cpu, tree_cpu_seconds(run.pid))
        load = os.getloadavg()
        venv = du_megabytes(clone / ".venv")
        url = f"http://127.0.0.1:{news_port}/api/v1/entries/search?q=vikbar%20iphone"
        with urllib.request.urlopen(url, timeout=60) as answer:
            mode = json.load(answer)["meta"]["mode"]
        version = subprocess.run(
            [str(clone / ".venv/bin/python"), "-V"], capture_output=True, text=True, check=True
        ).stdout.strip()
    finally:
        os.killpg(run.pid, signal.SIGINT)
        run.wait(timeout=60)
    refused = taken_port_refusal(clone, args.python)
    cache, limit = ("cold", 300) if args.cold else ("warm", 150)
    name = f"install_bench ({version}, pip cache {cache})"
    figures = [
        Figure(
            name,
            f"fresh clone to make run banner, pip cache {cache}",
            f"{wall:.0f} s",
            target=f"<= {limit} s on a quiet machine",
            met=wall <= limit,
        ),
        Figure(name, "CPU time to the banner (all processes)", f"{cpu:.0f} s"),
        Figure(
            name,
            "load average at the banner (1, 5, 15 min)",
            " / ".join(f"{value:.1f}" for value in load),
        ),
        Figure(name, ".venv of make run", f"{venv:.0f} MB", target="<= 600 MB", met=venv <= 600),
        Figure(
            name, "search meta.mode after make run", mode, target="semantic", met=mode == "semantic"
        ),
        Figure(
            name,
            "make run with the news port taken: refused after",
            f"{refused:.1f} s",
            target="<= 10 s, naming the port",
            met=refused <= 10,
        ),
    ]
    for figure in figures:
        print(
            f"{figure.measure}: {figure.value}"
            + (f" (target {figure.target})" if figure.target else "")
        )
    record(*figures)
    if not args.keep:
        shutil.rmtree(folder, ignore_errors=True)
    return 0 if all(figure.met is not False for figure in figures[3:]) else 1


if __name__ == "__main__":
    sys.exit(main())
