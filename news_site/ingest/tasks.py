"""Background work on the task engine (django-tasks, database backend, `db_worker` process).

The periodic schedule (deploy/ systemd timer, or cron) runs `ingest --enqueue`, which puts one
`ingest_task` on the queue; any number of workers may run it, because feeds and entries are
claimed one by one (news_site.news.feeds, news_site.news.summaries).

Publish first: `ingest_task` is the feeds step alone, and an entry is public on every surface
as soon as that step stores it. It then queues `ingest_process_task` for what follows
(summaries by the model, embeddings, transcripts, stories), so readers never wait for the
model, and a slow processing pass never delays the next fetch of the sources.
"""

from dataclasses import asdict
from typing import Any

from django_tasks import task
from django_tasks_db.models import DBTaskResult

from news_site.ingest.selectors import PROCESS_TASK_PATH
from news_site.ingest.services import PROCESS_STEPS, Step, ingest_run
from news_site.news.llm import model_from_settings


@task()
def ingest_task() -> dict[str, Any]:
    """The feeds step; returns the run's counts, which the task result keeps: /metrics reports
    the last run's from there (news_site/ingest/metrics.py)."""
    report = ingest_run(steps=[Step.FEEDS])
    # One waiting processing pass takes every entry stored by then: a second would find
    # nothing left to do.
    if not DBTaskResult.objects.filter(task_path=PROCESS_TASK_PATH, status="READY").exists():
        ingest_process_task.enqueue()
    return asdict(report)


@task()
def ingest_process_task() -> dict[str, Any]:
    """Everything after the feeds step, for whatever it has stored and not yet processed."""
    with model_from_settings() as model:
        report = ingest_run(model=model, steps=PROCESS_STEPS)
    return asdict(report)
