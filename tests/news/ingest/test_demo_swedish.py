"""The demo shows what a deployment with a model shows: every entry has a Swedish summary and
one in its own language, tags and a relevance, from the recorded model answers shipped with the
demo data, stored through the summaries step; and every surface (the API, the legacy JSON, RSS,
markdown and MCP) shows the Swedish summary for every entry it lists, none empty."""

import html
import xml.etree.ElementTree as ET

import pytest
import yaml

from news_site.ingest.demo import DEMO_DIR, demo_load
from news_site.news.models import Entry, Story, SummaryState

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.every_backend]


def _recording() -> dict:
    return yaml.safe_load((DEMO_DIR / "model_answers.yaml").read_text(encoding="utf-8"))


def _frontmatter(text: str) -> dict:
    return yaml.safe_load(text.split("---\n", 2)[1])


def test_every_demo_entry_has_the_recorded_model_summaries_tags_and_relevance() -> None:
    demo_load()
    recorded = {answer["title"]: answer for answer in _recording()["summaries"]}

    entries = list(Entry.objects.prefetch_related("tags"))
    assert len(entries) == 43
    for entry in entries:
        answer = recorded[entry.title]
        assert entry.summary_state == SummaryState.TRANSLATED, entry.title
        assert entry.summary_translated == answer["summary_sv"].strip()
        assert entry.summary_original == answer["summary_original"].strip()
        assert entry.summary_translated != entry.summary_original
        assert entry.platform_relevant is answer["platform_relevant"]
        assert {tag.name for tag in entry.tags.all()} == set(answer["tags"]), entry.title
    # Every recorded answer is used: the recording and the demo feeds agree.
    assert {entry.title for entry in entries} == set(recorded)
    # Stories of several sources get the model's Swedish title and text.
    several = Story.objects.filter(entries_count__gt=1)
    assert several.count() >= 10
    assert not several.filter(written_by_model=False).exists()


def test_no_surface_shows_a_demo_entry_without_a_swedish_summary(client, mcp_server) -> None:
    demo_load()
    shown = {entry.pk: entry for entry in Entry.objects.filter(platform_relevant=True)}
    assert len(shown) >= 35
    swedish = {pk: entry.summary_translated for pk, entry in shown.items()}
    assert all(swedish.values())

    # The API: the list (lang=sv is the default) and each entry's own answer.
    listed = client.get("/api/v1/entries", {"per_page": 100}).json()["data"]
    assert {item["id"] for item in listed} == set(shown)
    for item in listed:
        assert item["content"]["translated"] == {"language": "sv", "summary": swedish[item["id"]]}
        assert item["content"]["original"]["summary"]
    for pk in shown:
        detail = client.get(f"/api/v1/entries/{pk}").json()["data"]
        assert detail["content"]["translated"]["summary"] == swedish[pk]

    # The legacy JSON: the list and each entry.
    legacy = client.get("/entries.json", {"items": 100}).json()["entries"]
    assert {item["id"] for item in legacy} == set(shown)
    for item in legacy:
        assert item["summary"] == swedish[item["id"]]
    for pk in shown:
        assert client.get(f"/entries/{pk}.json").json()["summary"] == swedish[pk]

    # RSS: each item's description is the Swedish summary, then the credit.
    rss = client.get("/entries.rss").content
    channel = ET.fromstring(rss).find("channel")  # noqa: S314 - our own answer
    items = channel.findall("item")
    assert len(items) == len(shown)
    for item in items:
        pk = int(item.findtext("guid").removeprefix("entry-"))
        assert html.unescape(item.findtext("description")).startswith(f"{swedish[pk]} (")

    # Markdown: the Swedish summary, said to be Swedish, never "not translated yet".
    for pk in shown:
        text = client.get(f"/entries/{pk}.md").content.decode()
        meta = _frontmatter(text)
        assert meta["language"] == "sv" and meta["translated"] is True
        assert swedish[pk] in text
        assert "Ej översatt" not in text

    # MCP: the latest entries and each entry by id.
    latest = mcp_server.call("latest_news", {"limit": 50}).structured_content["entries"]
    assert {item["id"] for item in latest} == set(shown)
    for item in latest:
        assert item["summary"] == swedish[item["id"]]
    for pk in shown:
        result = mcp_server.call("get_entry", {"entry_id": pk})
        assert result.structured_content["summary"] == swedish[pk]
        assert _frontmatter(result.content[0].text)["language"] == "sv"
