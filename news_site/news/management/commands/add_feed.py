"""Register a source: `python -m news_site add_feed URL [--title T] [--language sv]`."""

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.core.validators import URLValidator

from news_site.news.feeds import feed_add
from news_site.news.models import FeedKind


class Command(BaseCommand):
    help = "Register a feed (RSS/Atom) as a source. Idempotent by URL."

    def add_arguments(self, parser):
        parser.add_argument("url")
        parser.add_argument("--title", default="", help="Defaults to the feed's own title.")
        parser.add_argument("--language", default="en", help="Source language, e.g. sv or en.")
        parser.add_argument(
            "--podcast", action="store_true", help="The service's own podcast feed."
        )

    def handle(self, *args, **options):
        url = options["url"]
        try:
            URLValidator(schemes=["http", "https"])(url)
        except ValidationError as exc:
            raise CommandError(f"not an http(s) URL: {url}") from exc
        kind = FeedKind.PODCAST if options["podcast"] else FeedKind.ARTICLES
        try:
            feed, created = feed_add(
                url=url, title=options["title"], language=options["language"], kind=kind
            )
        except ValueError as exc:
            raise CommandError(f"{exc}: {url[:200]}") from exc
        verb = "added" if created else "already registered"
        self.stdout.write(f"{verb}: feed {feed.pk} {feed.url}")
