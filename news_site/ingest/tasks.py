"""Background work on the task engine (django-tasks, database backend, `db_worker` process).

The periodic schedule (deploy/ systemd timer, or cron) runs `ingest --enqueue`, which puts one
`ingest_task` on the queue; any number of workers may run it, because feeds and entries are
claimed one by one (news_site.news.feeds, news_site.news.summaries).
"""

from dataclasses import asdict
from typing import Any

from django_tasks import task

from news_site.ingest.services import ingest_run
from news_site.news.llm import model_from_settings


@task()
def ingest_task() -> dict[str, Any]:
    """Returns the run's counts, which the task result keeps: /metrics reports the last run's
    from there (news_site/ingest/metrics.py)."""
    with model_from_settings() as model:
        report = ingest_run(model=model)
    return asdict(report)
