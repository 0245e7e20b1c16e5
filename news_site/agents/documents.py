"""The markdown documents agents read: entries, the entry index, guides and /llms.txt.

Each carries metadata and our Swedish summary only, credits the source in the form the
interface asks for ("enligt <källa>, via <tjänsten>"), and links to the original.
"""

from collections.abc import Iterable
from datetime import datetime

from news_site.agents.escaping import (
    markdown_block,
    markdown_link,
    markdown_text,
    safe_url,
    yaml_scalar,
)
from news_site.news.models import Entry, GuidePageType, ProductGuide, Story, SummaryState
from news_site.news.swedish import long_date
from news_site.podcasts.models import PodcastEpisode

_SUMMARY_SOURCE = {
    SummaryState.EXTRACTED: "extract",
    SummaryState.TRANSLATED: "ai",
    SummaryState.EDITED: "editor",
}
_GUIDE_SECTIONS = {
    GuidePageType.PRODUCT_HUB: "Produktguider",
    GuidePageType.FAMILY_HUB: "Produktfamiljer",
    GuidePageType.GENERATION_HUB: "Generationer",
    GuidePageType.RUMOR: "Rykten",
}


def _frontmatter(data: dict) -> str:
    """YAML front matter with every value written as JSON, which is valid YAML: PyYAML's
    representer costs about half a millisecond per page, and front matter is on every markdown
    page and every tool answer."""
    lines = [f"{key}: {yaml_scalar(value)}" for key, value in data.items()]
    return "---\n" + "\n".join(lines) + "\n---\n"


def _line(text: str) -> str:
    """Feed text as literal markdown on one line (titles from feeds can hold newlines)."""
    return markdown_text(text)


def credit(entry: Entry, *, site_name: str) -> str:
    """The credit line as plain text (RSS, JSON); markdown pages use credit_markdown."""
    return f"enligt {' '.join(entry.feed.title.split())}, via {site_name}"


def credit_markdown(entry: Entry, *, site_name: str) -> str:
    return f"enligt {markdown_text(entry.feed.title)}, via {markdown_text(site_name)}"


def entry_card(entry: Entry) -> dict:
    """An entry's metadata as every agent surface gives it: the markdown page's front matter
    and the MCP tools' structured content both start from this one card."""
    return {
        "id": entry.pk,
        "title": entry.title,
        # Stored before ingest cleaned URLs, a link may be unusable: "" rather than a bad URI.
        "url": safe_url(entry.url) or "",
        "source": entry.feed.title,
        "source_id": entry.feed_id,
        "published_at": entry.published_at.isoformat() if entry.published_at else None,
        "translated": entry.is_translated,
        "image": safe_url(entry.image_url),
        "tags": [tag.name for tag in entry.tags.all()],
    }


def entry_markdown(entry: Entry, *, base_url: str, site_name: str) -> str:
    meta = {
        **entry_card(entry),
        # The language of the text shown: the source's own until a Swedish summary exists.
        "language": "sv" if entry.is_translated else entry.language,
        "original_language": entry.language,
        "summary_source": _SUMMARY_SOURCE[SummaryState(entry.summary_state)],
        "canonical": f"{base_url}/entries/{entry.pk}",
    }
    parts = [
        _frontmatter(meta),
        f"# {_line(entry.title)}",
        "",
        markdown_block(entry.swedish_summary),
        "",
    ]
    if not entry.is_translated:
        parts += ["*Ej översatt ännu: texten ovan är ett utdrag på originalspråket.*", ""]
    parts.append(
        f"{markdown_link(f'Läs hela artikeln hos {entry.feed.title}', entry.url)} "
        f"({credit_markdown(entry, site_name=site_name)})"
    )
    return "\n".join(parts) + "\n"


def index_markdown(
    entries: Iterable[Entry], *, base_url: str, site_name: str, now: datetime
) -> str:
    meta = {"title": f"Senaste nyheterna på {site_name}", "generated_at": now.isoformat()}
    lines = [_frontmatter(meta), f"# Senaste nyheterna på {site_name}", ""]
    for entry in entries:
        when = f", {long_date(entry.published_at)}" if entry.published_at else ""
        lines.append(
            f"- [{_line(entry.title)}]({base_url}/entries/{entry.pk}.md) "
            f"({credit_markdown(entry, site_name=site_name)}{when})"
        )
    return "\n".join(lines) + "\n"


def guide_markdown(guide: ProductGuide, *, base_url: str) -> str:
    meta = {
        "slug": guide.slug,
        "title": guide.title,
        "page_type": guide.page_type,
        "description": guide.description or None,
        "updated_at": guide.updated_at.isoformat(),
        "canonical": f"{base_url}/{guide.slug}.md",
    }
    return f"{_frontmatter(meta)}# {_line(guide.title)}\n\n{guide.body.strip()}\n"


def llms_txt(guides: Iterable[ProductGuide], *, base_url: str, site_name: str) -> str:
    """The llms.txt convention: H1, a blockquote summary, notes, then H2 sections of links."""
    lines = [
        f"# {site_name}",
        "",
        "> Svenska AI-sammanfattningar av nyheter om Apple och dess produkter från ett 40-tal "
        "källor, med produktguider. Allt är läsbart utan inloggning.",
        "",
        "Varje artikel finns som markdown: lägg till `.md` efter artikelns adress eller skicka "
        "`Accept: text/markdown`. Sidorna innehåller metadata och vår svenska sammanfattning, "
        'aldrig originaltexten. Ange källan: "enligt <källa>, via '
        f'{site_name}", med länk.',
        "",
        "## Nyheter",
        "",
        f"- [Senaste nyheterna]({base_url}/index.md): de 50 senaste artiklarna, med länkar "
        "till varje artikels markdown",
        f"- [RSS]({base_url}/entries.rss): de 50 senaste artiklarna som RSS 2.0",
        f"- [API-referens]({base_url}/api/v1/docs): /api/v1 för appar och agenter "
        f"(OpenAPI-schema: {base_url}/api/v1/schema)",
    ]
    by_type: dict[str, list[ProductGuide]] = {}
    for guide in guides:
        by_type.setdefault(guide.page_type, []).append(guide)
    for page_type, heading in _GUIDE_SECTIONS.items():
        if page_type not in by_type:
            continue
        lines += ["", f"## {heading}", ""]
        for guide in by_type[page_type]:
            description = f": {_line(guide.description)}" if guide.description else ""
            lines.append(f"- [{_line(guide.title)}]({base_url}/{guide.slug}.md){description}")
    lines += [
        "",
        "## Optional",
        "",
        f"- [Äldre JSON-gränssnitt]({base_url}/entries.json): senaste artiklarna som JSON",
    ]
    return "\n".join(lines) + "\n"


def story_markdown(story: Story, entries: Iterable[Entry], *, base_url: str, site_name: str) -> str:
    """A running story: our own lead and text, then its entries with credits and links."""
    meta = {
        "id": story.pk,
        "title": story.title,
        "status": story.status,
        "updated_at": story.updated_at.isoformat(),
    }
    parts = [_frontmatter(meta), f"# {_line(story.title)}", ""]
    # Lead and body repeat feed text (the offline text) or a model's answer, which may echo
    # it: escaped like any feed text, each line its own paragraph (the offline body is one
    # line per source).
    parts += [
        markdown_block("\n\n".join(text.splitlines())) + "\n"
        for text in (story.lead, story.body)
        if text.strip()
    ]
    parts += ["## Artiklar", ""]
    for entry in entries:
        when = f", {long_date(entry.published_at)}" if entry.published_at else ""
        parts.append(
            f"- [{_line(entry.title)}]({base_url}/entries/{entry.pk}.md) "
            f"({credit_markdown(entry, site_name=site_name)}{when}): "
            f"{markdown_link('original', entry.url)}"
        )
    return "\n".join(parts) + "\n"


def episode_markdown(episode: PodcastEpisode) -> str:
    """One of the service's own podcast episodes: its show notes, chapters and links."""
    meta = {
        "episode_id": episode.episode_id,
        "guid": episode.guid,
        "title": episode.title,
        "published_on": episode.published_on.isoformat() if episode.published_on else None,
        "duration_seconds": episode.duration_seconds,
        "page": safe_url(episode.page_url),
        "audio": safe_url(episode.audio_url),
        "transcript": safe_url(episode.transcript_url),
    }
    parts = [_frontmatter(meta), f"# {_line(episode.title)}", ""]
    if episode.description.strip():
        parts += [markdown_block(episode.description), ""]
    if episode.chapters:
        parts += ["## Kapitel", ""]
        for chapter in episode.chapters:
            minutes, seconds = divmod(int(chapter.get("start_seconds") or 0), 60)
            parts.append(f"- {minutes}:{seconds:02d} {_line(chapter['title'])}")
        parts.append("")
    if episode.sources:
        parts += ["## Källor", ""]
        parts += [
            f"- {markdown_link(source.get('title', ''), source.get('url', ''))}"
            for source in episode.sources
        ]
    return "\n".join(parts) + "\n"
