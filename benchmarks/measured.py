"""A command's wall time and peak memory, for the ingest passes (ours and tt-rss's)."""

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class PassResult:
    seconds: float
    peak_rss_mb: float


def run_measured(
    command: list[str],
    *,
    env: dict[str, str] | None = None,
    user: str | None = None,
    cwd: str | Path | None = None,
) -> PassResult:
    """Wall time and the peak RSS of the largest process of `command`'s tree (children that
    it waits for included), measured by a fresh wrapper whose only children they are."""
    wrapper = (
        "import json, resource, subprocess, sys, time\n"
        "spec = json.loads(sys.argv[1])\n"
        "start = time.perf_counter()\n"
        "user = spec['user']\n"
        "ids = {'user': user, 'group': user, 'extra_groups': []} if user else {}\n"
        "done = subprocess.run(spec['command'], cwd=spec['cwd'], **ids,"
        " stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)\n"
        "seconds = time.perf_counter() - start\n"
        "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
        "print(json.dumps({'seconds': seconds, 'kb': peak, 'rc': done.returncode,"
        " 'stderr': done.stderr.decode(errors='replace')[-2000:]}))\n"
    )
    spec = {"command": command, "cwd": str(cwd) if cwd else None, "user": user}
    out = subprocess.run(
        [sys.executable, "-c", wrapper, json.dumps(spec)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    if result["rc"] != 0:
        raise RuntimeError(f"{command[:3]} failed ({result['rc']}): {result['stderr']}")
    return PassResult(result["seconds"], result["kb"] / 1024)
