"""The summaries step: model summaries of entries (with the article page's full text when
configured), and editors' requests for fresh ones.

One failed summary never stops the others; an entry is claimed by a short lease, so
overlapping runs never summarise the same entry.
"""

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from news_site.news import selectors
from news_site.news.articles import article_read
from news_site.news.entries import tags_named
from news_site.news.fetching import Fetcher, http_fetch
from news_site.news.generation import content_changed
from news_site.news.models import Entry, SummaryState
from news_site.news.progress import NoProgress, Progress
from news_site.news.summarise import BudgetExhausted, ChatModel, ModelUnavailable, SummaryError
from shared.fetch import FetchError

logger = logging.getLogger(__name__)

_HTML_ACCEPT = "text/html, application/xhtml+xml;q=0.9"
_CLAIM_LEASE = timedelta(minutes=10)


@dataclass
class SummaryReport:
    """What the summaries step did."""

    entries_summarised: int = 0
    summaries_failed: int = 0


def entries_summarise(
    *, model: ChatModel, fetcher: Fetcher = http_fetch, progress: Progress | None = None
) -> SummaryReport:
    """The summaries step: every entry due a model summary, within the model's call budget."""
    report = SummaryReport()
    progress = progress or NoProgress()
    now = timezone.now()
    due = list(selectors.entries_due_for_summary(now=now)[: model.max_calls])
    progress.start("summaries", len(due))
    for entry in due:
        try:
            if entry_summarise(entry=entry, fetcher=fetcher, model=model):
                report.entries_summarised += 1
            else:
                report.summaries_failed += 1
        except ModelUnavailable as exc:
            report.summaries_failed += 1
            logger.warning("the model is unavailable; summaries wait for the next run: %s", exc)
            break
        except BudgetExhausted:
            logger.info("summary budget spent; the rest waits for the next run")
            break
        finally:
            progress.advance()
    return report


def entry_claim(*, entry: Entry, now: datetime) -> bool:
    claimed = (
        Entry.objects.filter(pk=entry.pk)
        .filter(Q(summary_lease_until__isnull=True) | Q(summary_lease_until__lt=now))
        .update(summary_lease_until=now + _CLAIM_LEASE)
    )
    return claimed == 1


def entry_summarise(*, entry: Entry, model: ChatModel, fetcher: Fetcher = http_fetch) -> bool:
    """Ask the model for this entry's summaries. False when the model failed (recorded on the
    entry); raises BudgetExhausted when the run may not call the model again."""
    if not entry_claim(entry=entry, now=timezone.now()):
        return False
    article_text, page_image = _article_page(entry, fetcher=fetcher)
    try:
        summary = model.summarise(
            title=entry.title,
            text=article_text or entry.summary_original,
            language=entry.language,
            source=entry.feed.title,
        )
    except SummaryError as exc:
        Entry.objects.filter(pk=entry.pk).update(
            summary_attempts=F("summary_attempts") + 1,
            summary_error=str(exc)[:1000],
            summary_lease_until=None,
        )
        return False
    except ModelUnavailable as exc:
        # Not the entry's fault: no attempt is counted against it, the error is shown to editors.
        Entry.objects.filter(pk=entry.pk).update(
            summary_error=str(exc)[:1000], summary_lease_until=None
        )
        raise
    except BudgetExhausted:
        Entry.objects.filter(pk=entry.pk).update(summary_lease_until=None)
        raise
    with transaction.atomic():
        entry.summary_original = summary.original or entry.summary_original
        entry.summary_translated = summary.swedish
        entry.summary_state = SummaryState.TRANSLATED
        entry.summary_fingerprint = entry.content_fingerprint
        entry.resummarise_requested = False
        entry.summary_attempts = 0
        entry.summary_error = ""
        entry.summarised_at = timezone.now()
        entry.summary_lease_until = None
        entry.platform_relevant = summary.platform_relevant
        if not entry.image_url and page_image:
            entry.image_url = page_image
        entry.save()
        entry.tags.set(tags_named(names=summary.tags))
    content_changed()
    return True


def _article_page(entry: Entry, *, fetcher: Fetcher) -> tuple[str, str]:
    """The article's full text (for the model only, never stored) and its og:image."""
    if not settings.NEWS_FETCH_ARTICLE_PAGES:
        return "", ""
    try:
        result = fetcher(entry.url, headers={"Accept": _HTML_ACCEPT})
    except FetchError as exc:
        logger.info("article page of entry %s unreadable: %s", entry.pk, exc)
        return "", ""
    if result.status_code != 200:
        return "", ""
    content_type = result.headers.get("Content-Type", "")
    page = article_read(
        body=result.body, content_type=content_type, base_url=result.url or entry.url
    )
    return page.text, page.image_url


def entries_resummarise_request(*, entry_ids: Iterable[int]) -> int:
    """An editor asks for fresh model summaries; the next run makes them."""
    return Entry.objects.filter(pk__in=list(entry_ids)).update(
        resummarise_requested=True, summary_attempts=0, summary_error=""
    )
