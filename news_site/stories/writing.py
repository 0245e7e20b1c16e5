"""A story's title, lead and body: written by the configured model from the members' titles and
summaries, or built from those summaries offline (and marked as such on the story)."""

import json
import re
from dataclasses import dataclass

from news_site.news.models import Entry
from news_site.news.summarise import ChatModel, SummaryError

_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$")
_MAX_MEMBERS_IN_PROMPT = 12
_MAX_SUMMARY_CHARS = 1200

SYSTEM_PROMPT = """Du är redaktör på en svensk nyhetstjänst om Apple och dess produkter.
Du får flera artiklar från olika källor om samma händelse. Svara ENDAST med ett JSON-objekt
med nycklarna:
- "title": en saklig svensk rubrik för händelsen, högst 100 tecken;
- "lead": en ingress på svenska, 1-2 meningar;
- "body": en sammanfattande text på svenska, 2-4 stycken, som bara bygger på artiklarna och
  nämner vilka källor som säger vad.
Citera aldrig längre stycken ur artiklarna."""


@dataclass(frozen=True)
class StoryText:
    title: str
    lead: str
    body: str
    by_model: bool


def story_text_offline(*, members: list[Entry]) -> StoryText:
    """The first Swedish member's headline and summary as title and lead (the service is
    Swedish), every member's summary with its source as body."""
    lead_entry = next((e for e in members if e.language == "sv"), members[0])
    lines = [f"- {e.feed.title}: {_summary(e)}" for e in members if _summary(e)]
    return StoryText(
        title=lead_entry.title[:300],
        lead=_summary(lead_entry),
        body="\n".join(lines),
        by_model=False,
    )


def story_text_from_model(*, members: list[Entry], model: ChatModel) -> StoryText:
    """Raises SummaryError when the model gives nothing usable, BudgetExhausted when the run may
    not call it again."""
    articles = "\n\n".join(
        f"Källa: {e.feed.title}\nSpråk: {e.language}\nRubrik: {e.title}\n"
        f"Sammanfattning: {_summary(e)[:_MAX_SUMMARY_CHARS]}"
        for e in members[:_MAX_MEMBERS_IN_PROMPT]
    )
    content = model.complete(
        [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": articles}]
    )
    try:
        data = json.loads(_FENCE.sub("", content.strip()))
    except ValueError as exc:
        raise SummaryError("the model did not answer with JSON") from exc
    if not isinstance(data, dict):
        raise SummaryError("the model's JSON is not an object")
    title, lead, body = (data.get(key) for key in ("title", "lead", "body"))
    if not (isinstance(title, str) and isinstance(lead, str) and isinstance(body, str)) or not (
        title.strip() and lead.strip() and body.strip()
    ):
        raise SummaryError("the model's story lacks a title, lead or body")
    return StoryText(title=title.strip()[:300], lead=lead.strip(), body=body.strip(), by_model=True)


def _summary(entry: Entry) -> str:
    return entry.swedish_summary or entry.summary_original
