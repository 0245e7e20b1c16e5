"""The quick start's demo data, loaded offline through the real pipeline.

The bundled feed files stand in for the network: a fetcher serves them at their sources'
addresses, so parsing, deduplication, scheduling, the broken source's error path and the
offline summariser all run exactly as in production. Dates in the files are relative
(`@RFC822_HOURS_AGO(3)@`), so the demo always looks fresh.

The chat model is a recording too (demo_data/model_answers.yaml, marked as demo data): its
answers go through the same summaries step as a configured model's (the answer parsed, the
verbatim guard, the entry's summaries, tags and relevance stored), so every demo entry shows a
Swedish summary and one in its own language, and every story of several sources a Swedish
title, lead and text, as a deployment with a model does.
"""

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import httpx
import yaml
from django.db import transaction
from django.utils import timezone

from news_site.ingest.services import IngestReport, ingest_run
from news_site.news.entries import entry_view_record
from news_site.news.feeds import feed_add
from news_site.news.models import Entry, Feed, FeedKind, ProductGuide
from news_site.news.summarise import SYSTEM_PROMPT as SUMMARY_PROMPT
from news_site.news.summarise import BudgetExhausted, ChatModel, SummaryError
from news_site.stories.writing import SYSTEM_PROMPT as STORY_PROMPT
from shared.fetch import FetchError, FetchResult

DEMO_DIR = Path(__file__).resolve().parent / "demo_data"
_RELATIVE_DATE = re.compile(r"@(RFC822|ISO)_HOURS_AGO\((\d+)\)@")
# The demo podcast's files, bundled: chapters and transcripts (its links use example.com, a
# documentation host that exists, so nothing in the demo points at a host that does not).
_PODCAST_FILES = re.compile(r"^https://example\.com/podd/(chapters|transcripts)/(\d+)\.(json|vtt)$")
_PODCAST_TYPES = {"json": "application/json+chapters", "vtt": "text/vtt; charset=utf-8"}
# An article's title in the summaries and story prompts (news.summarise, stories.writing).
_PROMPT_TITLE = re.compile(r"^Rubrik: (.*)$", re.MULTILINE)


def _sources() -> list[dict[str, Any]]:
    return yaml.safe_load((DEMO_DIR / "sources.yaml").read_text(encoding="utf-8"))


class BundledFetcher:
    """Answers for the demo sources' URLs from the bundled files; everything else is offline."""

    def __init__(self, *, now: datetime) -> None:
        self.now = now
        self.files = {source["url"]: DEMO_DIR / "feeds" / source["file"] for source in _sources()}

    def __call__(
        self, url: str, *, headers: dict[str, str], max_bytes: int | None = None
    ) -> FetchResult:
        path = self.files.get(url)
        content_type = "application/rss+xml; charset=utf-8"
        if path is None and (match := _PODCAST_FILES.match(url)):
            path = DEMO_DIR / match[1] / f"{match[2]}.{match[3]}"
            content_type = _PODCAST_TYPES[match[3]]
        if path is None or not path.exists():
            raise FetchError("connection_error", "the demo is offline")
        body = _RELATIVE_DATE.sub(self._date, path.read_text(encoding="utf-8")).encode()
        return FetchResult(
            url=url,
            status_code=200,
            headers=httpx.Headers({"Content-Type": content_type}),
            body=body,
            permanent_redirect_url=None,
        )

    def _date(self, match: re.Match[str]) -> str:
        moment = (self.now - timedelta(hours=int(match[2]))).astimezone(UTC)
        return format_datetime(moment) if match[1] == "RFC822" else moment.isoformat()


@dataclass(frozen=True)
class Recording:
    """The recorded model answers: summaries by their article's title, story texts by their
    members' titles."""

    summaries: dict[str, dict[str, Any]]
    stories: dict[frozenset[str], dict[str, Any]]

    @classmethod
    def load(cls) -> "Recording":
        raw = yaml.safe_load((DEMO_DIR / "model_answers.yaml").read_text(encoding="utf-8"))
        summaries = {answer.pop("title"): answer for answer in raw["summaries"]}
        stories = {frozenset(answer.pop("titles")): answer for answer in raw["stories"]}
        return cls(summaries=summaries, stories=stories)


class RecordedModel(ChatModel):
    """The demo's chat model: answers the summaries and story prompts from the recording.

    Only the exchange with the model's server is replaced; the caller's parsing, guard and
    storing of the answer are the production ones. A prompt the recording has no answer for
    (a story the clustering grouped otherwise) fails as a real model's unusable answer does,
    and the caller's fallback (the offline text) is used.
    """

    def __init__(self, recording: Recording) -> None:
        # The base class's HTTP client is never used: no request leaves this process.
        super().__init__(
            base_url="http://model.invalid",
            model="demo-recording",
            api_key="",
            timeout=1.0,
            max_attempts=1,
            retry_base_seconds=0.0,
            max_calls=2 * (len(recording.summaries) + len(recording.stories)),
        )
        self.recording = recording

    def _complete(self, messages: list[dict[str, str]]) -> str:
        if self.calls >= self.max_calls:
            raise BudgetExhausted(f"the run's budget of {self.max_calls} model calls is spent")
        self.calls += 1
        system, prompt = messages[0]["content"], messages[-1]["content"]
        answer = None
        if system == SUMMARY_PROMPT:
            # The article's own text follows the prompt's header after a blank line.
            titles = _PROMPT_TITLE.findall(prompt.split("\n\n", 1)[0])
            answer = self.recording.summaries.get(titles[0]) if titles else None
        elif system == STORY_PROMPT:
            answer = self.recording.stories.get(frozenset(_PROMPT_TITLE.findall(prompt)))
        if answer is None:
            raise SummaryError("the demo's recording has no answer for this prompt")
        return json.dumps(answer, ensure_ascii=False)


def demo_feeds_register() -> list[Feed]:
    feeds = []
    for source in _sources():
        kind = FeedKind.PODCAST if source.get("podcast") else FeedKind.ARTICLES
        feed, _ = feed_add(
            url=source["url"], title=source["title"], language=source["language"], kind=kind
        )
        if not feed.site_url:
            feed.site_url = source["site"]
            feed.save(update_fields=["site_url"])
        feeds.append(feed)
    # The demo loads now, whatever the schedule says.
    Feed.objects.filter(pk__in=[f.pk for f in feeds]).update(
        next_check_at=timezone.now(), paused_at=None
    )
    return feeds


@transaction.atomic
def demo_guides_load() -> int:
    guides = yaml.safe_load((DEMO_DIR / "guides.yaml").read_text(encoding="utf-8"))
    for guide in guides:
        ProductGuide.objects.update_or_create(
            slug=guide["slug"],
            defaults={
                "title": guide["title"],
                "page_type": guide["page_type"],
                "description": guide["description"],
                "body": guide["body"],
            },
        )
    return len(guides)


def demo_views_record() -> None:
    """A few article views, so that the popular list differs from the latest list."""
    if Entry.objects.filter(view_count__gt=0).exists():
        return
    today = timezone.now().date()
    ranked = Entry.objects.filter(platform_relevant=True).order_by("title")
    for position, entry_id in enumerate(ranked.values_list("pk", flat=True)[:8]):
        for _ in range((position * 7) % 11 + 1):
            entry_view_record(entry_id=entry_id, day=today)


# The demo's sources live only in the bundled files: the worker of a running quick start leaves
# them alone (their addresses are example.com's) until the next `load_demo`.
DEMO_NEXT_CHECK = timedelta(days=365)


def demo_load() -> tuple[IngestReport, int]:
    feeds = demo_feeds_register()
    # The run also stores the podcast's transcripts, from the bundled files.
    model = RecordedModel(Recording.load())
    try:
        report = ingest_run(fetcher=BundledFetcher(now=timezone.now()), model=model)
    finally:
        model.close()
    Feed.objects.filter(pk__in=[feed.pk for feed in feeds]).update(
        next_check_at=timezone.now() + DEMO_NEXT_CHECK
    )
    guides = demo_guides_load()
    demo_views_record()
    return report, guides
