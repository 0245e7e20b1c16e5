"""Every surface agrees on visibility: for the same data, each entry, story and podcast episode
is either visible on all of /api/v1, the legacy JSON, the markdown/RSS pages and MCP, or on
none of them, in detail and in the lists alike."""

import re
from datetime import date

import pytest
from django.test import Client
from django.utils import timezone

from news_site.news.models import Entry, Story
from news_site.stories.recount import story_refresh

# The MCP tests' server: uvicorn with the ASGI app, in a thread sharing the test database.
from tests.support.mcp import McpServer
from tests.support.news_factories import EpisodeFactory, StoryFactory

pytestmark = pytest.mark.django_db(transaction=True)

# Ids no row has, to check that "none" really answers no on every surface.
MISSING_ID = 987654


@pytest.fixture
def mcp(request) -> McpServer:
    return request.getfixturevalue("mcp_server")


@pytest.fixture
def world(make_feed, make_entry, make_tag) -> dict:
    """Visible and hidden entries, stories and episodes, as ingest and clustering leave them."""
    iphone = make_tag("iPhone")
    feed, quiet = make_feed(title="MacRumors"), make_feed(title="Tyst källa", is_active=False)
    shown = StoryFactory(title="iPhone 18 presenteras", lead="Apple visar nya iPhone.")
    emptied = StoryFactory(title="Tom berättelse", lead="Ingen artikel kvar.")
    entries = {
        "relevant": make_entry(feed, tags=[iphone], title="iPhone 18 får ny kamera", story=shown),
        "relevant_untranslated": make_entry(
            feed, title="Apple updates the Mac", language="en", summary_translated=""
        ),
        "from_an_inactive_source": make_entry(quiet, title="Äldre nyhet om iPad"),
        "irrelevant": make_entry(feed, title="Orelaterad nyhet", platform_relevant=False),
        "irrelevant_in_a_story": make_entry(
            feed, title="Orelaterad i berättelse", platform_relevant=False, story=shown
        ),
    }
    # Counts as clustering keeps them; the emptied story lost its members.
    story_refresh(story=shown, now=timezone.now())
    episodes = {
        "newest": EpisodeFactory(
            episode_id="ep-2", title="Avsnitt 2", published_on=date(2026, 11, 1)
        ),
        "older": EpisodeFactory(
            episode_id="ep-1",
            title="Avsnitt 1",
            published_on=date(2026, 10, 1),
            transcript_url="https://podd.example/1.vtt",
        ),
    }
    return {
        "entries": entries,
        "stories": {"shown": shown, "emptied": emptied},
        "episodes": episodes,
    }


def _status(client: Client, path: str) -> bool:
    """Visible (200) or not (404); any other answer fails the test."""
    status = client.get(path).status_code
    assert status in (200, 404), (path, status)
    return status == 200


def _tool_visible(mcp: McpServer, tool: str, arguments: dict) -> bool:
    result = mcp.call(tool, arguments)
    if result.is_error:
        assert "no " in result.content[0].text, result.content[0].text
    return not result.is_error


def _entry_detail_visibility(client: Client, mcp: McpServer, entry_id: int) -> dict[str, bool]:
    return {
        "api": _status(client, f"/api/v1/entries/{entry_id}"),
        "legacy": _status(client, f"/entries/{entry_id}.json"),
        "markdown": _status(client, f"/entries/{entry_id}.md"),
        "html": _status(client, f"/entries/{entry_id}"),
        "mcp": _tool_visible(mcp, "get_entry", {"entry_id": entry_id}),
    }


def _entry_list_ids(client: Client, mcp: McpServer) -> dict[str, set[int]]:
    index = client.get("/index.md").content.decode()
    rss = client.get("/entries.rss").content.decode()
    latest = mcp.call("latest_news", {"limit": 50}).structured_content["entries"]
    popular = mcp.call("popular_news", {"limit": 50}).structured_content["entries"]
    return {
        "api_list": {e["id"] for e in client.get("/api/v1/entries").json()["data"]},
        "api_popular": {e["id"] for e in client.get("/api/v1/entries/popular").json()["data"]},
        "legacy_list": {e["id"] for e in client.get("/entries.json").json()["entries"]},
        "legacy_popular": {e["id"] for e in client.get("/entries/popular.json").json()["entries"]},
        "markdown_index": {int(n) for n in re.findall(r"/entries/(\d+)\.md\)", index)},
        "rss": {int(n) for n in re.findall(r'<guid isPermaLink="false">entry-(\d+)</guid>', rss)},
        "mcp_latest": {e["id"] for e in latest},
        "mcp_popular": {e["id"] for e in popular},
    }


def test_each_entry_is_visible_on_every_surface_or_on_none(client, mcp, world):
    lists = _entry_list_ids(client, mcp)

    for name, entry in [*world["entries"].items(), ("missing", Entry(pk=MISSING_ID))]:
        detail = _entry_detail_visibility(client, mcp, entry.pk)
        listed = {surface: entry.pk in ids for surface, ids in lists.items()}
        answers = {**detail, **listed}
        assert len(set(answers.values())) == 1, (name, answers)
    # The rule itself: relevant entries are public, whatever their source's state.
    visible = {e.pk for e in world["entries"].values() if e.platform_relevant}
    assert lists["api_list"] == visible
    assert len(visible) == 3


def test_each_story_is_visible_on_every_surface_or_on_none(client, mcp, world):
    api_list = {s["id"] for s in client.get("/api/v1/stories").json()["data"]}
    mcp_list = {
        s["id"] for s in mcp.call("latest_stories", {"limit": 50}).structured_content["stories"]
    }

    stories = [*world["stories"].items(), ("missing", Story(pk=MISSING_ID))]
    for name, story in stories:
        answers = {
            "api": _status(client, f"/api/v1/stories/{story.pk}"),
            "api_with_slug": _status(client, f"/api/v1/stories/{story.pk}-any-slug"),
            "mcp": _tool_visible(mcp, "get_story", {"story_id": story.pk}),
            "api_list": story.pk in api_list,
            "mcp_list": story.pk in mcp_list,
        }
        assert len(set(answers.values())) == 1, (name, answers)
    assert api_list == {world["stories"]["shown"].pk}


def test_a_storys_entries_agree_between_the_api_and_mcp(client, mcp, world):
    story = world["stories"]["shown"]

    api = client.get(f"/api/v1/stories/{story.pk}").json()["data"]["entries"]
    tool = mcp.call("get_story", {"story_id": story.pk}).structured_content["entries"]

    assert [e["id"] for e in api] == [e["id"] for e in tool] == [world["entries"]["relevant"].pk]


def test_each_episode_is_visible_on_every_surface_or_on_none(client, mcp, world):
    api_list = {e["episode_id"] for e in client.get("/api/v1/podd_episodes").json()["data"]}
    mcp_list = {
        e["episode_id"]
        for e in mcp.call("list_podd_episodes", {"limit": 50}).structured_content["episodes"]
    }

    episode_ids = [e.episode_id for e in world["episodes"].values()] + ["no-such-episode"]
    for episode_id in episode_ids:
        answers = {
            "api": _status(client, f"/api/v1/podd_episodes/{episode_id}"),
            "mcp": _tool_visible(mcp, "get_podd_episode", {"episode_id": episode_id}),
            "api_list": episode_id in api_list,
            "mcp_list": episode_id in mcp_list,
        }
        assert len(set(answers.values())) == 1, (episode_id, answers)
    assert api_list == {"ep-1", "ep-2"}
