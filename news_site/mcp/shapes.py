"""The structured content of the tool answers: the markdown surfaces' cut (metadata and our
summary, never an article's text) as JSON, one shape per resource."""

# pydantic (which builds the output schemas) needs typing_extensions.TypedDict before 3.12.
from typing_extensions import TypedDict

from news_site.agents.documents import credit, entry_card
from news_site.agents.escaping import safe_url
from news_site.news.models import Entry, Feed, ProductGuide, Story, Tag
from news_site.podcasts.models import PodcastEpisode


class EntryItem(TypedDict):
    id: int
    title: str
    url: str
    source: str
    source_id: int
    published_at: str | None
    summary: str
    translated: bool
    image: str | None
    tags: list[str]
    credit: str
    markdown_url: str


class FeedItem(TypedDict):
    id: int
    title: str


class TagItem(TypedDict):
    id: int
    name: str


class StoryItem(TypedDict):
    id: int
    title: str
    lead: str
    status: str
    updated_at: str


class StoryDetail(StoryItem):
    body: str
    entries: list[EntryItem]


class EpisodeItem(TypedDict):
    episode_id: str
    guid: str
    title: str
    published_on: str | None
    duration_seconds: int | None
    page_url: str | None
    audio_url: str | None
    cover_url: str | None
    transcript_url: str | None


class Chapter(TypedDict):
    start_seconds: int
    title: str
    url: str


class Source(TypedDict):
    title: str
    url: str


class EpisodeDetail(EpisodeItem):
    description: str
    chapters: list[Chapter]
    sources: list[Source]


class GuideItem(TypedDict):
    slug: str
    title: str
    page_type: str
    description: str
    updated_at: str
    markdown_url: str


def entry_item(entry: Entry, *, base_url: str, site_name: str) -> EntryItem:
    return {
        **entry_card(entry),  # type: ignore[typeddict-item]  # its keys: agents/documents.py
        "summary": entry.swedish_summary,
        "credit": credit(entry, site_name=site_name),
        "markdown_url": f"{base_url}/entries/{entry.pk}.md",
    }


def feed_item(feed: Feed) -> FeedItem:
    return {"id": feed.pk, "title": feed.title}


def tag_item(tag: Tag) -> TagItem:
    return {"id": tag.pk, "name": tag.name}


def story_item(story: Story) -> StoryItem:
    return {
        "id": story.pk,
        "title": story.title,
        "lead": story.lead,
        "status": story.status,
        "updated_at": story.updated_at.isoformat(),
    }


def story_detail(
    story: Story, entries: list[Entry], *, base_url: str, site_name: str
) -> StoryDetail:
    return {
        **story_item(story),
        "body": story.body,
        "entries": [entry_item(entry, base_url=base_url, site_name=site_name) for entry in entries],
    }


def episode_item(episode: PodcastEpisode) -> EpisodeItem:
    return {
        "episode_id": episode.episode_id,
        "guid": episode.guid,
        "title": episode.title,
        "published_on": episode.published_on.isoformat() if episode.published_on else None,
        "duration_seconds": episode.duration_seconds,
        "page_url": safe_url(episode.page_url),
        "audio_url": safe_url(episode.audio_url),
        "cover_url": safe_url(episode.cover_url),
        "transcript_url": safe_url(episode.transcript_url),
    }


def episode_detail(episode: PodcastEpisode) -> EpisodeDetail:
    return {
        **episode_item(episode),
        "description": episode.description,
        "chapters": episode.chapters,
        "sources": episode.sources,
    }


def guide_item(guide: ProductGuide, *, base_url: str) -> GuideItem:
    return {
        "slug": guide.slug,
        "title": guide.title,
        "page_type": guide.page_type,
        "description": guide.description,
        "updated_at": guide.updated_at.isoformat(),
        "markdown_url": f"{base_url}/{guide.slug}.md",
    }


class EntryList(TypedDict):
    entries: list[EntryItem]


class SearchResult(EntryList):
    query: str
    mode: str


class FeedList(TypedDict):
    feeds: list[FeedItem]


class TagList(TypedDict):
    tags: list[TagItem]


class StoryList(TypedDict):
    stories: list[StoryItem]


class EpisodeList(TypedDict):
    episodes: list[EpisodeItem]


class GuideList(TypedDict):
    guides: list[GuideItem]


class GuideDetail(GuideItem):
    markdown: str
