"""Compile the admin's translation catalogues: `python -m news_site compile_catalogues`."""

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand

from news_site.news.catalogues import catalogues_compile


class Command(BaseCommand):
    help = (
        "Compile every .po catalogue under LOCALE_PATHS to the .mo Django reads (no GNU "
        "gettext needed)."
    )

    def handle(self, *args, **options):
        compiled = catalogues_compile(locale_dirs=[Path(p) for p in settings.LOCALE_PATHS])
        if options["verbosity"] >= 1:
            for path in compiled:
                self.stderr.write(f"compiled {path}")
