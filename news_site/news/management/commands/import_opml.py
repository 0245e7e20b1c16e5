"""Register the sources of an OPML file: `python -m news_site import_opml FILE`."""

import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, no_translations

from news_site.news.opml import OpmlError, opml_import


class Command(BaseCommand):
    help = (
        "Register every source an OPML file lists (exports of Miniflux, FreshRSS, Tiny Tiny RSS "
        "and other readers). Idempotent by URL; exits non-zero when an outline was refused."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", type=Path, help="The OPML file ('-' reads standard input).")

    # An operator's command speaks English; the admin shows the same reasons in Swedish.
    @no_translations
    def handle(self, *args, **options):
        path: Path = options["file"]
        try:
            data = sys.stdin.buffer.read() if str(path) == "-" else path.read_bytes()
        except OSError as exc:
            raise CommandError(f"cannot read {path}: {exc.strerror}") from exc
        try:
            report = opml_import(data=data)
        except OpmlError as exc:
            raise CommandError(f"{path}: {exc}") from exc
        if options["verbosity"] >= 2:
            for feed in report.added:
                self.stdout.write(f"added: feed {feed.pk} {feed.url}")
        for position, label, reason in report.refused:
            self.stderr.write(f"outline {position} ({label}): {reason}")
        self.stdout.write(
            f"{len(report.added)} added, {len(report.existing)} already registered, "
            f"{len(report.refused)} refused"
        )
        if report.refused:
            raise CommandError(f"{len(report.refused)} outline(s) refused")
