"""A task for the worker tests, importable by `db_worker` processes (the repository root is on
their PYTHONPATH). It does real work of the app: one article view through the service, which
adds one to the entry's counters, so a job that ran twice shows in the database."""

import os
import time
from datetime import date

from django_tasks import task

from news_site.news.entries import entry_view_record


@task()
def entry_view_task(entry_id: int, day: str) -> int:
    # Long enough that the workers' claims overlap, short enough for a quick test.
    time.sleep(0.02)
    entry_view_record(entry_id=entry_id, day=date.fromisoformat(day))
    return os.getpid()
