"""The webhook work on the compliance task worker (django-tasks, database backend,
`python -m compliance_site db_worker`).

`webhooks_sweep` fans out new change events and queues a flush for every endpoint with a due
delivery. It runs after each reindex that published something (receivers.py) and from the
periodic schedule (`webhooks_sweep --enqueue`, deploy/ timer or `make run`'s loop), which is
what brings retries back when they fall due. A flush sends one endpoint's due deliveries;
several workers flush different endpoints at once.
"""

from typing import Any

from django.db import transaction
from django.utils import timezone
from django_tasks import task

from compliance_site.webhooks.dispatch import endpoint_flush
from compliance_site.webhooks.fanout import deliveries_fan_out
from compliance_site.webhooks.selectors import endpoints_with_due_deliveries


@task()
def webhooks_sweep() -> dict[str, Any]:
    now = timezone.now()
    created = deliveries_fan_out(now=now)
    endpoints = endpoints_with_due_deliveries(now=now)
    for endpoint_id in endpoints:
        webhook_endpoint_flush.enqueue(endpoint_id)
    return {"deliveries_created": created, "endpoints_flushed": len(endpoints)}


@task()
def webhook_endpoint_flush(endpoint_id: int) -> dict[str, int]:
    report = endpoint_flush(endpoint_id=endpoint_id)
    return {"delivered": report.delivered, "failed": report.failed}


def sweep_soon() -> None:
    """Queue a sweep once the current transaction (if any) has committed."""
    transaction.on_commit(webhooks_sweep.enqueue)


def endpoint_flush_soon(*, endpoint_id: int) -> None:
    transaction.on_commit(lambda: webhook_endpoint_flush.enqueue(endpoint_id))
