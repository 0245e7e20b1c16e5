"""Register a source: `python -m news_site add_feed URL [--title T] [--language sv]`.

URL may be the feed's address or any page of the site: the feed, its title and its site are
found as the admin's add form finds them (news.discovery). `--no-discover` registers the address
as given, unfetched (a source that is down right now; the podcast feed is never looked up).
"""

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, no_translations
from django.core.validators import URLValidator

from news_site.news import discovery
from news_site.news.feeds import feed_add
from news_site.news.models import Feed, FeedKind


class Command(BaseCommand):
    help = "Register a source by its feed's or its site's address. Idempotent by feed URL."

    def add_arguments(self, parser):
        parser.add_argument("url")
        parser.add_argument("--title", default="", help="Defaults to the feed's own title.")
        parser.add_argument("--language", default="en", help="Source language, e.g. sv or en.")
        parser.add_argument(
            "--podcast", action="store_true", help="The service's own podcast feed."
        )
        parser.add_argument(
            "--no-discover",
            action="store_true",
            help="Register URL as the feed's address without fetching it now.",
        )

    # An operator's command speaks English; the admin shows the same reasons in Swedish.
    @no_translations
    def handle(self, *args, **options):
        url = options["url"]
        try:
            URLValidator(schemes=["http", "https"])(url)
        except ValidationError as exc:
            raise CommandError(f"not an http(s) URL: {url}") from exc
        kind = FeedKind.PODCAST if options["podcast"] else FeedKind.ARTICLES
        title, site_url = options["title"], ""
        if kind == FeedKind.ARTICLES and not options["no_discover"]:
            try:
                found = discovery.feed_discover(url=url)
            except discovery.DiscoveryError as exc:
                hint = (
                    " (the operator setting FETCH_ALLOW_PRIVATE_NETWORKS allows local addresses)"
                    if exc.problem == discovery.DiscoveryProblem.BLOCKED_ADDRESS
                    else ""
                )
                raise CommandError(
                    f"no feed found at {url[:200]}: {exc.problem} ({exc.detail}){hint}; "
                    "--no-discover registers the address as given"
                ) from exc
            url, title, site_url = found.url, title or found.title, found.site_url
        try:
            feed, created = feed_add(url=url, title=title, language=options["language"], kind=kind)
        except ValueError as exc:
            raise CommandError(f"{exc}: {url[:200]}") from exc
        if created and site_url:
            Feed.objects.filter(pk=feed.pk, site_url="").update(site_url=site_url)
        verb = "added" if created else "already registered"
        self.stdout.write(f"{verb}: feed {feed.pk} {feed.url} ({feed.title})")
