"""Several `db_worker` processes on one PostgreSQL queue never run a job twice: django-tasks-db
claims each job with SELECT ... FOR UPDATE SKIP LOCKED, so the workers share the queue."""

import os
import subprocess
import sys
import time
from datetime import date, timedelta

import pytest
from django.conf import settings as django_settings
from django_tasks_db.models import DBTaskResult

from news_site.news.models import Entry, EntryView
from tests.conftest import REPO_ROOT, database_url_for_subprocess
from tests.news.news.news_worker_tasks import entry_view_task
from tests.private_services import postgres_pass_only

pytestmark = pytest.mark.django_db(transaction=True)

WORKERS = 3
ENTRIES = 40
DAYS = 3


def test_three_workers_run_every_job_exactly_once(make_feed, make_entry):
    postgres_pass_only(django_settings.DATABASES["default"])
    feed = make_feed()
    entries = [make_entry(feed) for _ in range(ENTRIES)]
    days = [date(2026, 1, 1) + timedelta(days=n) for n in range(DAYS)]
    for day in days:
        for entry in entries:
            entry_view_task.enqueue(entry.pk, day.isoformat())
    env = {
        **os.environ,
        "NEWS_DATABASE_URL": database_url_for_subprocess(django_settings.DATABASES["default"]),
        "PYTHONPATH": str(REPO_ROOT),
    }
    started = time.monotonic()
    workers = [
        subprocess.Popen(
            # --batch: work until the queue is empty, then exit.
            [
                *(sys.executable, "-m", "news_site", "db_worker", "--batch"),
                *("--interval", "0.1", "--worker-id", f"worker-{n}", "-v", "0"),
            ],
            cwd=REPO_ROOT,
            env=env,
        )
        for n in range(WORKERS)
    ]
    codes = [worker.wait(timeout=120) for worker in workers]
    elapsed = time.monotonic() - started

    assert codes == [0] * WORKERS
    jobs = list(DBTaskResult.objects.all())
    assert len(jobs) == ENTRIES * DAYS
    assert {job.status for job in jobs} == {"SUCCESSFUL"}
    # Each job was claimed by one worker, once.
    assert all(len(job.worker_ids) == 1 for job in jobs)
    by_worker = {
        wid: sum(job.worker_ids == [wid] for job in jobs)
        for wid in {job.worker_ids[0] for job in jobs}
    }
    assert len(by_worker) > 1, by_worker  # the workers really shared the queue
    # And each job's effect happened once: one view per (entry, day), three per entry.
    assert set(EntryView.objects.values_list("count", flat=True)) == {1}
    assert EntryView.objects.count() == ENTRIES * DAYS
    assert set(Entry.objects.values_list("view_count", flat=True)) == {DAYS}
    print(f"{len(jobs)} jobs by {WORKERS} workers in {elapsed:.1f} s: {by_worker}")
