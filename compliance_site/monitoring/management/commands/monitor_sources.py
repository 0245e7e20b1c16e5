"""The weekly job: fetch, normalise and hash every monitored government page."""

from django.core.management.base import BaseCommand

from compliance_site.monitoring.services import monitor_sources


class Command(BaseCommand):
    help = "Fetch every monitored source URL, record snapshots and flag changed states."

    def handle(self, *args, **options):
        report = monitor_sources()
        if options["verbosity"] >= 1:
            for change in report.changed:
                self.stdout.write(f"changed: {change}")
            errors = ", ".join(f"{n} {code}" for code, n in sorted(report.errors.items()))
            self.stdout.write(
                f"monitor_sources: {report.fetched} fetched, {report.failed} failed"
                f"{f' ({errors})' if errors else ''}, {len(report.changed)} changed"
            )
