"""Monitoring's answers to what the records app announces."""

from datetime import date
from typing import Any

from django.dispatch import receiver

from compliance_site.monitoring.services import flags_clear_verified
from compliance_site.records.signals import state_verified


@receiver(state_verified, dispatch_uid="monitoring.clear_verified_flags")
def clear_verified_flags(
    sender: Any, *, state_abbreviation: str, verified_on: date, version: int, **kwargs: Any
) -> None:
    """A newly published state version re-verifies the state: its older flags clear."""
    flags_clear_verified(
        state_abbreviation=state_abbreviation, verified_on=verified_on, version=version
    )
