"""Summaries: an OpenAI-compatible chat-completions model, or an offline extractive fallback.

The model gets the article's full text when we could read it; what comes back (and only that)
is stored. The offline summariser uses the publisher's own feed teaser and marks its output as
not translated, unless the source already writes Swedish.
"""

import html
import json
import random
import re
import time
from dataclasses import dataclass

import httpx
from django.conf import settings

from news_site.news.guard import VerbatimCopy, answer_guard, tags_allowed
from news_site.news.text import excerpt
from news_site.news.vocabulary import is_vendor_relevant, tags_for
from shared.untrusted_text import without_unpublishable

_MAX_TEXT_CHARS = 12_000
_MAX_TAGS = 6
_RETRY_AFTER_CAP_SECONDS = 60
# Models wrap JSON in a Markdown code fence now and then, asked not to or not.
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$")

SYSTEM_PROMPT = """Du är redaktör på en svensk nyhetstjänst om Apple och dess produkter.
Du får en artikel. Svara ENDAST med ett JSON-objekt med nycklarna:
- "summary_sv": en trogen sammanfattning på svenska, 2-4 meningar, utan egna tillägg;
- "summary_original": en kort sammanfattning (1-2 meningar) på artikelns eget språk;
- "tags": högst 5 korta ämnesord (produktnamn som "iPhone", "Mac", "iOS");
- "platform_relevant": true om artikeln handlar om Apple eller Apples produkter, annars false.
Citera aldrig längre stycken ur artikeln."""


@dataclass(frozen=True)
class Summary:
    original: str
    swedish: str
    tags: list[str]
    platform_relevant: bool


class SummaryError(Exception):
    """The model gave no usable summary for this entry (after retries)."""


class BudgetExhausted(Exception):
    """This run may not call the model again."""


class ModelUnavailable(BudgetExhausted):
    """The model did not answer (network error, timeout, 429 or 5xx) through all retries. The
    run stops calling it: with a hanging model every further call would cost the whole
    timeout and retries again, holding the worker (and the feeds' next fetch) for hours."""


def summarise_offline(*, title: str, text: str, language: str) -> Summary:
    original = excerpt(text) or title
    joined = f"{title}\n{text}"
    return Summary(
        original=original,
        # A Swedish source's own lead is already the Swedish summary.
        swedish=original if language == "sv" else "",
        tags=tags_for(joined),
        platform_relevant=is_vendor_relevant(joined),
    )


class ChatModel:
    """One run's client: counts its calls against the run's budget."""

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        api_key: str,
        timeout: float,
        max_attempts: int,
        retry_base_seconds: float,
        max_calls: int,
    ) -> None:
        self.model = model
        self.max_attempts = max(1, max_attempts)
        self.retry_base_seconds = retry_base_seconds
        self.max_calls = max_calls
        self.calls = 0
        self.unavailable = False
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(
            base_url=base_url.rstrip("/") + "/", headers=headers, timeout=timeout
        )

    @classmethod
    def from_settings(cls) -> "ChatModel | None":
        """The configured model, or None for the offline summariser."""
        if not (settings.NEWS_LLM_BASE_URL and settings.NEWS_LLM_MODEL):
            return None
        return cls(
            base_url=settings.NEWS_LLM_BASE_URL,
            model=settings.NEWS_LLM_MODEL,
            api_key=settings.NEWS_LLM_API_KEY,
            timeout=settings.NEWS_LLM_TIMEOUT_SECONDS,
            max_attempts=settings.NEWS_LLM_MAX_ATTEMPTS,
            retry_base_seconds=settings.NEWS_LLM_RETRY_BASE_SECONDS,
            max_calls=settings.NEWS_LLM_MAX_CALLS_PER_RUN,
        )

    def close(self) -> None:
        self._client.close()

    def summarise(self, *, title: str, text: str, language: str, source: str) -> Summary:
        user = (
            f"Källa: {source}\nSpråk: {language}\nRubrik: {title}\n\nArtikel:\n"
            f"{text[:_MAX_TEXT_CHARS]}"
        )
        content = self._complete(
            [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]
        )
        summary = _parse_summary(content)
        summary_guard(summary, article=f"{title}\n{text[:_MAX_TEXT_CHARS]}")
        return summary

    def complete(self, messages: list[dict[str, str]]) -> str:
        """One JSON-mode completion under this run's budget and retries (story texts use it)."""
        return self._complete(messages)

    def _complete(self, messages: list[dict[str, str]]) -> str:
        payload = {
            "model": self.model,
            "messages": messages,
            "temperature": 0.2,
            "response_format": {"type": "json_object"},
        }
        if self.unavailable:
            raise ModelUnavailable("the model did not answer earlier in this run")
        problem = "no attempt made"
        for attempt in range(self.max_attempts):
            if self.calls >= self.max_calls:
                raise BudgetExhausted(f"the run's budget of {self.max_calls} model calls is spent")
            self.calls += 1
            wait = self.retry_base_seconds * (2**attempt) * random.uniform(0.5, 1.5)
            try:
                response = self._client.post("chat/completions", json=payload)
            except httpx.TransportError as exc:
                problem = f"model unreachable: {type(exc).__name__}"
            else:
                if response.status_code == 200:
                    return _message_content(response)
                problem = f"model answered HTTP {response.status_code}"
                if response.status_code != 429 and response.status_code < 500:
                    raise SummaryError(problem)
                wait = max(wait, _retry_after(response))
            if attempt + 1 < self.max_attempts:
                time.sleep(wait)
        self.unavailable = True
        raise ModelUnavailable(f"{problem} after {self.max_attempts} attempts")


def _retry_after(response: httpx.Response) -> float:
    raw = response.headers.get("Retry-After", "")
    return min(float(raw), _RETRY_AFTER_CAP_SECONDS) if raw.isdigit() else 0.0


def _message_content(response: httpx.Response) -> str:
    try:
        content = response.json()["choices"][0]["message"]["content"]
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise SummaryError("the model's answer is not a chat completion") from exc
    if not isinstance(content, str):
        raise SummaryError("the model's answer has no text content")
    return content


def _parse_summary(content: str) -> Summary:
    try:
        data = json.loads(strip_code_fence(content))
    except ValueError as exc:
        raise SummaryError("the model did not answer with JSON") from exc
    if not isinstance(data, dict):
        raise SummaryError("the model's JSON is not an object")
    swedish = data.get("summary_sv")
    original = data.get("summary_original")
    swedish = model_text(swedish) if isinstance(swedish, str) else ""
    if not swedish:
        raise SummaryError("the model gave no Swedish summary")
    raw_tags = data.get("tags")
    tags = raw_tags if isinstance(raw_tags, list) else []
    cleaned_tags = [model_text(t) for t in tags if isinstance(t, str)]
    return Summary(
        original=model_text(original) if isinstance(original, str) else "",
        swedish=swedish,
        tags=tags_allowed(t for t in cleaned_tags if t)[:_MAX_TAGS],
        platform_relevant=data.get("platform_relevant") is True,
    )


def model_text(value: str) -> str:
    """A model's text as the plain text we store and publish: HTML entities decoded (models
    trained on web pages write `&amp;`; every surface escapes once on the way out), and the
    characters no store or reader should get removed (shared.untrusted_text: NUL, controls,
    lone surrogates, noncharacters, bidirectional overrides)."""
    return without_unpublishable(html.unescape(value)).strip()


def summary_guard(summary: Summary, *, article: str) -> None:
    """Raise SummaryError for an answer that is too long or copies the article as a reader
    sees it (news.guard)."""
    try:
        answer_guard(
            swedish=summary.swedish, original=summary.original, tags=summary.tags, article=article
        )
    except VerbatimCopy as exc:
        raise SummaryError(str(exc)) from exc


def strip_code_fence(content: str) -> str:
    """The model's answer without a Markdown code fence around it (summaries, story texts)."""
    return _FENCE.sub("", content.strip())
