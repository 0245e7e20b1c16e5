"""Write the article sources as OPML: `python -m news_site export_opml [FILE]`."""

import os
import tempfile
from pathlib import Path

from django.core.management.base import BaseCommand
from django.utils import timezone

from news_site.news.opml import exported_feeds, opml_export


class Command(BaseCommand):
    help = (
        "Write every article source as an OPML 2.0 file (standard output when FILE is not given)."
    )

    def add_arguments(self, parser):
        parser.add_argument("file", nargs="?", type=Path)

    def handle(self, *args, **options):
        document = opml_export(feeds=exported_feeds(), now=timezone.now())
        path: Path | None = options["file"]
        if path is None:
            self.stdout.write(document.decode("utf-8"), ending="")
            return
        # Written beside the target and moved into place: a reader never sees half a file.
        handle, temporary = tempfile.mkstemp(dir=path.parent or Path("."), prefix=".opml-")
        with os.fdopen(handle, "wb") as out:
            out.write(document)
        os.replace(temporary, path)
        self.stderr.write(f"wrote {path}")
