"""The news app's own background work: fetching one source now, for an editor who just added
it or asked for it, instead of at the next scheduled run."""

from django.utils import timezone
from django_tasks import task

from news_site.news.feeds import feed_claim, feed_refresh
from news_site.news.models import Feed, FeedKind


@task()
def feed_fetch_task(feed_id: int) -> str:
    """Fetch and store one article source; returns the outcome the feed's page shows. The
    service's own podcast feed waits for the ingest run, which stores episodes."""
    feed = Feed.objects.filter(pk=feed_id, kind=FeedKind.ARTICLES).first()
    if feed is None:
        return "gone"
    # "Fetch now" makes the source due, so the schedule's run may take it too: claimed as that
    # run claims its feeds, a source is fetched by one of them only, and one failure is one
    # pause (two fetches at once had paused it twice, and the editors got two mails).
    if not feed_claim(feed=feed, now=timezone.now()):
        return "taken"
    return str(feed_refresh(feed=feed).outcome)
