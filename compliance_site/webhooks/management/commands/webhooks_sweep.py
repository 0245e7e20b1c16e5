"""Fan out new change events and send the deliveries that are due (compliance_site/webhooks)."""

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from compliance_site.webhooks.tasks import webhooks_sweep


class Command(BaseCommand):
    help = (
        "Fan out new change events to webhook endpoints and queue their due deliveries. "
        "With --enqueue the task worker does it (the periodic schedule); without, it runs here."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--enqueue", action="store_true", help="Queue the sweep for the task worker."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["enqueue"]:
            result = webhooks_sweep.enqueue()
            if options["verbosity"] >= 2:
                self.stdout.write(f"webhooks_sweep queued: {result.id}")
            return
        counts = webhooks_sweep.call()
        if options["verbosity"] >= 1:
            self.stdout.write(
                f"webhooks: {counts['deliveries_created']} deliveries created, "
                f"{counts['endpoints_flushed']} endpoints queued for sending"
            )
