"""Webhooks' answer to what the records app announces."""

from typing import Any

from django.dispatch import receiver

from compliance_site.records.signals import changes_published
from compliance_site.webhooks.tasks import sweep_soon


@receiver(changes_published, dispatch_uid="webhooks.sweep_after_reindex")
def sweep_after_reindex(sender: Any, *, last_sequence: int, **kwargs: Any) -> None:
    """Only a wake-up: the sweep reads the events from the outbox mark, so a lost wake-up is
    made good by the next periodic sweep."""
    sweep_soon()
