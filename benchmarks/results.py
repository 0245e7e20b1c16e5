"""The figures a benchmark script reports, collected by `make bench` (benchmarks/run_all.py)
into one table. Each script still prints its own; this only appends them, as JSON lines, to
the file named by BENCH_RESULTS when that is set."""

import json
import os
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Figure:
    benchmark: str
    measure: str
    value: str
    # The figure against its ceiling measured in the same run, where the issue asks for one.
    ratio: str = ""
    target: str = ""
    met: bool | None = None


def record(*figures: Figure) -> None:
    path = os.environ.get("BENCH_RESULTS")
    if not path:
        return
    with open(path, "a", encoding="utf-8") as out:
        for figure in figures:
            out.write(json.dumps(asdict(figure)) + "\n")
