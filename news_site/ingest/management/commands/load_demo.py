"""Fill the database with the bundled demo (sources, entries and their recorded model summaries,
podcast, guides), offline."""

from django.core.management.base import BaseCommand

from news_site.ingest.demo import demo_load


class Command(BaseCommand):
    help = (
        "Load the bundled demo feeds through the pipeline (the model's answers from the "
        "recording shipped with the demo data) and guides."
    )

    def handle(self, *args, **options):
        report, guides = demo_load()
        if options["verbosity"] >= 1:
            self.stdout.write(f"demo: {report.line()}; {guides} product guides")
