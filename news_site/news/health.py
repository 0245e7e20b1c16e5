"""Which sources need an editor, and telling the editors when one stops.

A source that fails is retried with backoff; after NEWS_FEED_PAUSE_AFTER_DAYS of failures it is
paused and nothing fetches it until an editor resumes it. That must not go unnoticed: each run
sends one mail listing the sources paused since the last notice (one mail per run however many
paused, and a source is named once per pause, never again until it is resumed and pauses
again), to every active staff account with an address.
"""

from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import send_mail
from django.db import transaction
from django.db.models import F, Q, QuerySet
from django.utils.translation import gettext, ngettext

from news_site.news.models import Feed


@dataclass(frozen=True)
class SourceHealth:
    paused: list[Feed]
    failing: list[Feed]  # failing now, retried with backoff, not paused yet


def source_health() -> SourceHealth:
    """Sources that need an editor: paused ones first, then failing ones, longest first."""
    troubled = Feed.objects.filter(Q(paused_at__isnull=False) | Q(error_count__gt=0))
    ordered = troubled.order_by(F("failing_since").asc(nulls_last=True), "title")
    feeds = list(ordered)
    return SourceHealth(
        paused=[feed for feed in feeds if feed.paused_at is not None],
        failing=[feed for feed in feeds if feed.paused_at is None],
    )


def _unannounced_pauses() -> QuerySet[Feed]:
    return Feed.objects.filter(paused_at__isnull=False).filter(
        Q(pause_notified_at__isnull=True) | Q(pause_notified_at__lt=F("paused_at"))
    )


def _notice(feeds: list[Feed], *, admin_url: str) -> str:
    count = len(feeds)
    lines = [
        ngettext(
            "%(count)d source has been paused after %(days)d days of errors and is no longer "
            "fetched:",
            "%(count)d sources have been paused after %(days)d days of errors and are no longer "
            "fetched:",
            count,
        )
        % {"count": count, "days": settings.NEWS_FEED_PAUSE_AFTER_DAYS},
        "",
    ]
    for feed in feeds:
        since = feed.failing_since.date().isoformat() if feed.failing_since else gettext("unknown")
        failing = gettext("failing since %(since)s: %(error)s") % {
            "since": since,
            "error": feed.last_error,
        }
        lines += [f"- {feed.title} ({feed.url})", f"  {failing}"]
    lines += [
        "",
        gettext("See the sources' health: %(url)s") % {"url": admin_url},
        gettext(
            "Correct the address, or select the source and the action “Fetch now” to resume it."
        ),
    ]
    return "\n".join(lines)


def paused_sources_notify(*, now: datetime) -> int:
    """Mail the editors about sources paused since the last notice; returns how many."""
    # The worker sends it, with no request to take the address from: NEWS_PUBLIC_URL makes
    # the link one an editor can click (without it, the path alone).
    admin_url = settings.NEWS_PUBLIC_URL.rstrip("/") + "/admin/news/feed/health/"
    # Two runs at once (the schedule's and one an operator started) each read the same
    # unannounced pauses: each pause is claimed by one conditional update, so only one run
    # names it. The mail is sent inside the same transaction: if it fails, the claims are
    # undone and the next run tells the editors.
    with transaction.atomic():
        candidates = list(_unannounced_pauses().order_by("title"))
        feeds = [
            feed
            for feed in candidates
            if _unannounced_pauses().filter(pk=feed.pk).update(pause_notified_at=now)
        ]
        if feeds:
            _notice_send(feeds, admin_url=admin_url)
    return len(feeds)


def _notice_send(feeds: list[Feed], *, admin_url: str) -> None:
    # Claimed even with nobody to tell: the health page shows them, and no later run should
    # send a backlog of old pauses to an editor who adds an address afterwards.
    recipients = sorted(
        get_user_model()
        .objects.filter(is_active=True, is_staff=True)
        .exclude(email="")
        .values_list("email", flat=True)
    )
    if recipients:
        send_mail(
            subject=ngettext(
                "%(site)s: %(count)d source paused",
                "%(site)s: %(count)d sources paused",
                len(feeds),
            )
            % {"site": settings.NEWS_SITE_NAME, "count": len(feeds)},
            message=_notice(feeds, admin_url=admin_url),
            from_email=None,
            recipient_list=recipients,
        )
