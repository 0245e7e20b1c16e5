"""The weekly job: fetch, normalise and hash every monitored government page.

A source that fails is recorded on its own (admin: Monitored sources) and listed here; the run
goes on and exits 0, because a government site being down is news for the operator, not a
failure of the job. A source that keeps failing is backed off and counted as such.
"""

from typing import Any

from django.core.management.base import BaseCommand

from compliance_site.monitoring.services import monitor_sources


class Command(BaseCommand):
    help = "Fetch every monitored source URL, record snapshots and flag changed states."

    def handle(self, *args: Any, **options: Any) -> None:
        report = monitor_sources()
        for failure in report.failures:
            self.stderr.write(f"failed: {failure}")
        if options["verbosity"] >= 1:
            for change in report.changed:
                self.stdout.write(f"changed: {change}")
            errors = ", ".join(f"{n} {code}" for code, n in sorted(report.errors.items()))
            self.stdout.write(
                f"monitor_sources: {report.fetched} fetched, {report.failed} failed"
                f"{f' ({errors})' if errors else ''}, {len(report.changed)} changed, "
                f"{report.backed_off} backed off"
            )
