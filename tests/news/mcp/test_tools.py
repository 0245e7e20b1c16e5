"""Each of the twelve tools over real HTTP with the SDK's client: good arguments answer with
the markdown surfaces' content cut (text and structured content), bad ones with a tool error."""

import json
from datetime import date

import pytest
import yaml
from django.utils import timezone

from news_site.stories.recount import story_refresh
from tests.support.news_factories import EpisodeFactory, GuideFactory, StoryFactory

pytestmark = pytest.mark.every_backend


@pytest.fixture
def news(make_feed, make_entry, make_tag):
    iphone, mac = make_tag("iPhone"), make_tag("Mac")
    macrumors, ninetofive = make_feed(title="MacRumors"), make_feed(title="9to5Mac")
    story = StoryFactory(title="iPhone 18 presenteras", lead="Apple visar nya iPhone.")
    entries = [
        make_entry(macrumors, tags=[iphone], title="iPhone 18 får ny kamera", story=story),
        make_entry(ninetofive, tags=[iphone, mac], title="Apple uppdaterar Mac", view_count=50),
        make_entry(ninetofive, tags=[mac], title="Ny MacBook Air", story=story),
    ]
    hidden = make_entry(macrumors, title="Orelaterad nyhet om iPhone", platform_relevant=False)
    # Counts as clustering keeps them; a story is visible while it has members.
    story = story_refresh(story=story, now=timezone.now())
    return {
        "tags": (iphone, mac),
        "feeds": (macrumors, ninetofive),
        "entries": entries,
        "hidden": hidden,
        "story": story,
    }


def frontmatter(text: str) -> dict:
    return yaml.safe_load(text.split("---\n", 2)[1])


def text_of(result) -> str:
    """The readable answer: the first text block (a successful answer's last block is the
    structured content as JSON)."""
    return result.content[0].text


def test_every_answer_carries_its_structured_content_as_json_text_too(mcp_server, news):
    for name, arguments in [("latest_news", {}), ("list_feeds", {}), ("latest_stories", {})]:
        result = mcp_server.call(name, arguments)
        assert not result.is_error, text_of(result)
        assert len(result.content) == 2
        assert json.loads(result.content[-1].text) == result.structured_content


def assert_tool_error(result, needle: str) -> None:
    assert result.is_error is True
    assert needle in text_of(result)


def test_latest_news_lists_newest_relevant_entries_with_credit(mcp_server, news, served_queries):
    with served_queries.at_most(2):
        result = mcp_server.call("latest_news", {"limit": 2})
    assert result.is_error is False
    entries = result.structured_content["entries"]
    newest = sorted(news["entries"], key=lambda entry: entry.listed_at, reverse=True)[:2]
    assert [entry["id"] for entry in entries] == [entry.pk for entry in newest]
    first = entries[0]
    assert first["credit"] == f"enligt {newest[0].feed.title}, via Nyhetstjänsten"
    assert first["markdown_url"] == f"{mcp_server.base_url}/entries/{newest[0].pk}.md"
    text = text_of(result)
    assert newest[0].title in text and newest[0].summary_translated in text
    assert "via Nyhetstjänsten" in text
    assert news["hidden"].title not in text


def test_latest_news_filters_by_feed_and_tag(mcp_server, news):
    macrumors = news["feeds"][0]
    by_feed = mcp_server.call("latest_news", {"feed_id": macrumors.pk}).structured_content
    assert {entry["source"] for entry in by_feed["entries"]} == {"MacRumors"}
    mac = news["tags"][1]
    by_tag = mcp_server.call("latest_news", {"tag_id": mac.pk}).structured_content
    assert all("Mac" in entry["tags"] for entry in by_tag["entries"])
    assert len(by_tag["entries"]) == 2


@pytest.mark.parametrize(
    ("arguments", "needle"),
    [
        ({"limit": 0}, "limit"),
        ({"limit": 51}, "limit"),
        ({"limit": "many"}, "limit"),
        ({"feed_id": 999999}, "no source"),
        ({"tag_id": 999999}, "no tag"),
        ({"feed_id": -1}, "feed_id"),
    ],
)
def test_latest_news_refuses_bad_arguments(mcp_server, news, arguments, needle):
    assert_tool_error(mcp_server.call("latest_news", arguments), needle)


def test_popular_news_puts_the_most_read_first(mcp_server, news):
    result = mcp_server.call("popular_news", {"limit": 3})
    assert result.structured_content["entries"][0]["title"] == "Apple uppdaterar Mac"
    assert_tool_error(mcp_server.call("popular_news", {"limit": 100}), "limit")


def test_search_news_matches_every_word_in_titles_and_summaries(mcp_server, news):
    result = mcp_server.call("search_news", {"query": "iphone kamera"})
    assert result.structured_content["mode"] == "keyword"
    assert [entry["title"] for entry in result.structured_content["entries"]] == [
        "iPhone 18 får ny kamera"
    ]
    nothing = mcp_server.call("search_news", {"query": "android"})
    assert nothing.structured_content["entries"] == []


@pytest.mark.parametrize(
    ("arguments", "needle"),
    [
        ({}, "query"),
        ({"query": ""}, "query"),
        ({"query": "   "}, "word"),
        ({"query": "x" * 201}, "query"),
    ],
)
def test_search_news_refuses_bad_arguments(mcp_server, news, arguments, needle):
    assert_tool_error(mcp_server.call("search_news", arguments), needle)


def test_get_entry_answers_the_entry_markdown(mcp_server, news):
    entry = news["entries"][0]
    result = mcp_server.call("get_entry", {"entry_id": entry.pk})
    text = text_of(result)
    assert text.startswith("---\n")
    assert frontmatter(text)["canonical"] == f"{mcp_server.base_url}/entries/{entry.pk}"
    assert f"[Läs hela artikeln hos MacRumors]({entry.url})" in text
    assert result.structured_content["tags"] == ["iPhone"]
    assert result.structured_content["summary"] == entry.summary_translated


@pytest.mark.parametrize("entry_id", [999999, 0, "abc", None])
def test_get_entry_refuses_unknown_and_malformed_ids(mcp_server, news, entry_id):
    result = mcp_server.call("get_entry", {"entry_id": entry_id})
    assert result.is_error is True


def test_get_entry_does_not_show_irrelevant_entries(mcp_server, news):
    assert_tool_error(mcp_server.call("get_entry", {"entry_id": news["hidden"].pk}), "no entry")


def test_list_feeds_and_list_tags(mcp_server, news):
    feeds = mcp_server.call("list_feeds").structured_content["feeds"]
    assert [feed["title"] for feed in feeds] == ["9to5Mac", "MacRumors"]
    tags = mcp_server.call("list_tags")
    assert [tag["name"] for tag in tags.structured_content["tags"]] == ["iPhone", "Mac"]
    assert f"iPhone (tag_id {news['tags'][0].pk})" in text_of(tags)


def test_latest_stories_and_get_story(mcp_server, news, served_queries):
    story = news["story"]
    StoryFactory(title="Tom berättelse")  # no relevant entries: not listed
    stories = mcp_server.call("latest_stories").structured_content["stories"]
    assert [item["title"] for item in stories] == [story.title]
    with served_queries.at_most(3):
        result = mcp_server.call("get_story", {"story_id": story.pk})
    assert [entry["title"] for entry in result.structured_content["entries"]] == sorted(
        ["iPhone 18 får ny kamera", "Ny MacBook Air"],
        key=lambda title: next(e for e in news["entries"] if e.title == title).listed_at,
        reverse=True,
    )
    text = text_of(result)
    assert "Apple visar nya iPhone." in text and "enligt MacRumors, via Nyhetstjänsten" in text
    assert_tool_error(mcp_server.call("get_story", {"story_id": 999999}), "no story")
    assert_tool_error(mcp_server.call("latest_stories", {"limit": -1}), "limit")


@pytest.fixture
def episodes(transactional_db):
    return [
        EpisodeFactory(
            episode_id="ep-1",
            title="Avsnitt 1",
            description="Vi pratar om iPhone.",
            published_on=date(2026, 10, 1),
            chapters=[{"start_seconds": 75, "title": "Intro", "url": ""}],
            sources=[{"title": "Apple", "url": "https://apple.example/"}],
            audio_url="https://podd.example/1.mp3",
        ),
        EpisodeFactory(episode_id="ep-2", title="Avsnitt 2", published_on=date(2026, 11, 1)),
    ]


def test_podd_episodes(mcp_server, episodes):
    listed = mcp_server.call("list_podd_episodes", {"limit": 5}).structured_content
    assert [episode["episode_id"] for episode in listed["episodes"]] == ["ep-2", "ep-1"]
    result = mcp_server.call("get_podd_episode", {"episode_id": "ep-1"})
    assert result.structured_content["chapters"][0]["start_seconds"] == 75
    text = text_of(result)
    assert "1:15 Intro" in text and "[Apple](https://apple.example/)" in text
    assert_tool_error(mcp_server.call("get_podd_episode", {"episode_id": "nope"}), "no episode")
    assert_tool_error(mcp_server.call("get_podd_episode", {}), "episode_id")
    assert_tool_error(mcp_server.call("list_podd_episodes", {"limit": 51}), "limit")


@pytest.fixture
def guides(transactional_db):
    values = [
        ("iphone", "iPhone", "product_hub"),
        ("iphone-18", "iPhone 18", "generation_hub"),
        ("iphone-fold", "Vikbar iPhone", "rumor"),
    ]
    return [
        GuideFactory(slug=slug, title=title, page_type=kind, body=f"Om {title}.")
        for slug, title, kind in values
    ]


def test_product_guides(mcp_server, guides):
    everything = mcp_server.call("list_product_guides").structured_content["guides"]
    assert {guide["slug"] for guide in everything} == {"iphone", "iphone-18", "iphone-fold"}
    rumors = mcp_server.call("list_product_guides", {"page_type": "rumor"}).structured_content
    assert [guide["slug"] for guide in rumors["guides"]] == ["iphone-fold"]
    result = mcp_server.call("get_product_guide", {"slug": "iphone-18"})
    assert text_of(result) == result.structured_content["markdown"]
    assert "# iPhone 18\n\nOm iPhone 18.\n" in text_of(result)
    assert frontmatter(text_of(result))["canonical"] == f"{mcp_server.base_url}/iphone-18.md"


@pytest.mark.parametrize(
    ("tool", "arguments", "needle"),
    [
        ("list_product_guides", {"page_type": "laptop"}, "page_type"),
        ("list_product_guides", {"page_type": 3}, "page_type"),
        ("get_product_guide", {"slug": "nope"}, "no guide"),
        ("get_product_guide", {}, "slug"),
        ("get_product_guide", {"slug": ["iphone"]}, "slug"),
    ],
)
def test_product_guides_refuse_bad_arguments(mcp_server, guides, tool, arguments, needle):
    assert_tool_error(mcp_server.call(tool, arguments), needle)


def test_an_unknown_tool_is_an_error_not_a_crash(mcp_server):
    assert mcp_server.call("delete_everything").is_error is True


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("search_news", {"query": "ipad\x00"}),
        ("get_podd_episode", {"episode_id": "\x00"}),
        ("get_product_guide", {"slug": "ipad\x00pro"}),
    ],
)
def test_nul_in_arguments_is_a_tool_error_without_a_traceback(
    mcp_server, news, caplog, tool, arguments
):
    with caplog.at_level("INFO"):
        result = mcp_server.call(tool, arguments)

    assert_tool_error(result, "NUL")
    assert [record.getMessage() for record in caplog.records if record.exc_info] == []
