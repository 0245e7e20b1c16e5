"""Peak RSS of the news task worker through a first pass (issue 24: no ingest or worker process
above 300 MB).

`news_ingest_bench.py` measures `python -m news_site ingest`; in production the scheduled
`ingest_task` runs the feeds step on the task worker (`db_worker`) and queues
`ingest_process_task` (summaries, embeddings, stories), which the same worker runs and after
which it keeps the model. This serves the 40 generated feeds of the distinct corpus
(benchmarks/feedgen.py), queues `ingest_task` on a fresh database, runs one `db_worker` until
both tasks have finished, and reports the worker's peak RSS (the kernel's VmHWM) and the
time from start to fully processed. Every entry stored and every relevant one embedded, both
tasks successful and stories made, or it fails.

    BENCH_INGEST_DB=news_worker_bench BENCH_REDIS_URL=redis://127.0.0.1:6379/5 \
        python benchmarks/news_worker_rss.py
"""

import os
import subprocess
import sys
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))
os.environ.setdefault("BENCH_INGEST_DB", "news_worker_bench")

from benchmarks.feedgen import FeedServer, FeedSet  # noqa: E402
from benchmarks.ingest_setup import ENV, database_fresh, django_setup  # noqa: E402
from benchmarks.news_ingest_bench import ours_feeds_register  # noqa: E402
from benchmarks.results import Figure, record  # noqa: E402

RSS_MB = 300
# A first pass took 30 s at load 5-10; this only bounds a stuck worker.
BOUND_SECONDS = 900
FINISHED = ("SUCCESSFUL", "FAILED")


def peak_rss_mb(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(status.split("VmHWM:")[1].split()[0]) // 1024


def main() -> int:
    django_setup()
    from django_tasks_db.models import DBTaskResult

    from news_site.ingest.tasks import ingest_task
    from news_site.news.models import Entry, Story
    from news_site.search.models import EntryEmbedding

    feeds = FeedSet(distinct=True)
    server = FeedServer(feeds, host="127.0.0.1", port=0).start()
    try:
        database_fresh()
        ours_feeds_register([server.url(path) for path in feeds.paths()], feeds)
        ingest_task.enqueue()
        started = time.monotonic()
        worker = subprocess.Popen(
            [sys.executable, "-m", "news_site", "db_worker", "--no-reload", "--interval", "1"],
            cwd=REPO_ROOT,
            env={**os.environ, **ENV},
        )
        peak = 0
        try:
            while time.monotonic() - started < BOUND_SECONDS:
                peak = max(peak, peak_rss_mb(worker.pid))
                tasks = list(DBTaskResult.objects.values_list("task_path", "status"))
                if len(tasks) == 2 and all(status in FINISHED for _, status in tasks):
                    break
                time.sleep(0.5)
            seconds = time.monotonic() - started
            peak = max(peak, peak_rss_mb(worker.pid))
        finally:
            worker.terminate()
            worker.wait(60)
    finally:
        server.stop()
    counts = {
        "entries": Entry.objects.count(),
        "relevant": Entry.objects.filter(platform_relevant=True).count(),
        "embedded": EntryEmbedding.objects.count(),
        "stories": Story.objects.count(),
    }
    print(f"tasks: {tasks}")
    print(f"counts: {counts}")
    complete = (
        len(tasks) == 2
        and all(status == "SUCCESSFUL" for _, status in tasks)
        and counts["entries"] == feeds.feeds * feeds.items
        and counts["embedded"] == counts["relevant"] > 0
        and counts["stories"] > 0
    )
    met = complete and peak <= RSS_MB
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(
        f"worker, first pass (distinct corpus): fully processed {seconds:.1f} s, peak RSS "
        f"{peak} MB (target <= {RSS_MB} MB: {'met' if met else 'NOT met'}); load {load}"
    )
    record(
        Figure(
            "news task worker, first pass (distinct corpus)",
            "peak RSS of db_worker",
            f"{peak} MB",
            target=f"<= {RSS_MB} MB",
            met=met,
        )
    )
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
