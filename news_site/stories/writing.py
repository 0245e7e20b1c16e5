"""A story's title, lead and body: written by the configured model from the members' titles and
summaries, or built from those summaries offline (and marked as such on the story). Texts are
rewritten only when their members changed (or a model is now available for an offline text).
"""

import json
import logging
from collections import defaultdict
from dataclasses import dataclass
from typing import cast

from django.db.models import QuerySet
from django.utils.text import slugify

from news_site.news.models import Entry, Story
from news_site.news.summarise import (
    BudgetExhausted,
    ChatModel,
    SummaryError,
    model_text,
    strip_code_fence,
)
from news_site.news.text import sha256
from news_site.stories import selectors
from news_site.stories.rows import rows_update

logger = logging.getLogger(__name__)

# Stories whose members are read, and whose texts are written, together.
_WRITE_CHUNK = 500
_TEXT_FIELDS = ["title", "slug", "lead", "body", "written_by_model", "text_fingerprint"]
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


# What a story's text is made of, per member: id, title, summary_original, summary_translated.
MemberText = tuple[int, str, str, str]


@dataclass(frozen=True)
class TextsWritten:
    """What stories_write did: texts written, and how many of them by the model."""

    stories: int = 0
    by_model: int = 0


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
        data = json.loads(strip_code_fence(content))
    except ValueError as exc:
        raise SummaryError("the model did not answer with JSON") from exc
    if not isinstance(data, dict):
        raise SummaryError("the model's JSON is not an object")
    title, lead, body = (
        model_text(value) if isinstance(value, str) else ""
        for value in (data.get(key) for key in ("title", "lead", "body"))
    )
    if not (title and lead and body):
        raise SummaryError("the model's story lacks a title, lead or body")
    return StoryText(title=title[:300], lead=lead, body=body, by_model=True)


def _summary(entry: Entry) -> str:
    return entry.swedish_summary or entry.summary_original


def stories_write(*, stories: QuerySet[Story], model: ChatModel | None) -> TextsWritten:
    """Write the text of every story whose members changed since its text was written, and
    upgrade offline texts of multi-source stories when a model is configured. A story of one
    article is that article: it never costs a model call. Stories are read 500 at a time: first
    the four columns of their members that a text is made of (a run that changed nothing reads
    no more), then the whole members of the stories whose text is due; offline texts are
    written in bulk."""
    written_count = by_model = 0
    ordered = list(
        stories.filter(entries_count__gt=0)
        # Vectors and names are clustering's, not the text's: not read here.
        .defer("centroid", "entities")
        .order_by("-updated_at", "-id")
    )
    for start in range(0, len(ordered), _WRITE_CHUNK):
        chunk = ordered[start : start + _WRITE_CHUNK]
        texts_of: dict[int, list[MemberText]] = defaultdict(list)
        for story_id, *member in selectors.stories_member_texts(story_ids=[s.pk for s in chunk]):
            texts_of[story_id].append(cast(MemberText, tuple(member)))
        due: dict[int, str] = {}
        for story in chunk:
            texts = texts_of[story.pk]
            if not texts:
                continue
            fingerprint = _members_fingerprint(texts)
            upgrade = model is not None and len(texts) > 1 and not story.written_by_model
            if fingerprint != story.text_fingerprint or upgrade:
                due[story.pk] = fingerprint
        members_of: dict[int, list[Entry]] = defaultdict(list)
        if due:
            for entry in selectors.stories_members(story_ids=list(due)):
                # Members of the stories asked for: story_id is set.
                members_of[cast(int, entry.story_id)].append(entry)
        written: list[Story] = []
        for story in chunk:
            if story.pk not in due:
                continue
            members, fingerprint = members_of[story.pk], due[story.pk]
            text = None
            if model is not None and len(members) > 1:
                try:
                    text = story_text_from_model(members=members, model=model)
                except SummaryError as exc:
                    logger.info("story %s: model text failed, offline text used: %s", story.pk, exc)
                except BudgetExhausted:
                    logger.info("model budget spent; remaining stories get offline texts")
                    model = None
            if text is None:
                if fingerprint == story.text_fingerprint:
                    continue
                text = story_text_offline(members=members)
            _story_text_set(story=story, text=text, fingerprint=fingerprint)
            written.append(story)
            written_count += 1
            by_model += text.by_model
        rows_update(Story, written, _TEXT_FIELDS)
    return TextsWritten(stories=written_count, by_model=by_model)


def _story_text_set(*, story: Story, text: StoryText, fingerprint: str) -> None:
    story.title = text.title
    story.slug = slugify(text.title)[:300]
    story.lead = text.lead
    story.body = text.body
    story.written_by_model = text.by_model
    story.text_fingerprint = fingerprint


def _members_fingerprint(texts: list[MemberText]) -> str:
    """Changes when a member joins or a member's title or summaries change."""
    return sha256("\n".join("\t".join(map(str, text)) for text in texts))
