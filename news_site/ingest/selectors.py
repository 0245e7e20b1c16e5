"""Reads of the ingest runs, from the task queue's kept results (django-tasks database backend)."""

from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Max
from django_tasks_db.models import DBTaskResult

INGEST_TASK_PATH = "news_site.ingest.tasks.ingest_task"
# What follows the feeds step (summaries, embeddings, transcripts, stories).
PROCESS_TASK_PATH = "news_site.ingest.tasks.ingest_process_task"


def ingest_worker_status(*, now: datetime) -> dict:
    """When a worker last finished an ingest run; stale after NEWS_WORKER_STALE_MINUTES."""
    last = DBTaskResult.objects.filter(task_path=INGEST_TASK_PATH, status="SUCCESSFUL").aggregate(
        last=Max("finished_at")
    )["last"]
    stale_after = timedelta(minutes=settings.NEWS_WORKER_STALE_MINUTES)
    return {
        "ok": last is not None and now - last <= stale_after,
        "last_successful_run": last.isoformat() if last else None,
    }


def ingest_runs_latest() -> tuple[DBTaskResult | None, DBTaskResult | None]:
    """The ingest run that finished last (successful or not) and the last successful one."""
    finished = DBTaskResult.objects.filter(
        task_path=INGEST_TASK_PATH, finished_at__isnull=False
    ).order_by("-finished_at")
    return finished.first(), finished.filter(status="SUCCESSFUL").first()


def ingest_processing_latest() -> DBTaskResult | None:
    """The last successful processing pass (the steps after the feeds step)."""
    return (
        DBTaskResult.objects.filter(task_path=PROCESS_TASK_PATH, status="SUCCESSFUL")
        .order_by("-finished_at")
        .first()
    )
