"""The markdown documents agents read: entries, the entry index, guides and /llms.txt.

Each carries metadata and our Swedish summary only, credits the source in the form the
interface asks for ("enligt <källa>, via <tjänsten>"), and links to the original.
"""

from collections.abc import Iterable
from datetime import datetime

import yaml

from news_site.news.models import Entry, GuidePageType, ProductGuide, SummaryState
from news_site.news.swedish import long_date

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
    return "---\n" + yaml.safe_dump(data, allow_unicode=True, sort_keys=False) + "---\n"


def _line(text: str) -> str:
    """Text safe on one markdown line (titles from feeds can hold newlines)."""
    return " ".join(text.split())


def credit(entry: Entry, *, site_name: str) -> str:
    return f"enligt {entry.feed.title}, via {site_name}"


def entry_markdown(entry: Entry, *, base_url: str, site_name: str) -> str:
    meta = {
        "id": entry.pk,
        "title": entry.title,
        "url": entry.url,
        "source": entry.feed.title,
        "source_id": entry.feed_id,
        "published_at": entry.published_at.isoformat() if entry.published_at else None,
        "language": "sv",
        "original_language": entry.language,
        "translated": entry.is_translated,
        "summary_source": _SUMMARY_SOURCE[SummaryState(entry.summary_state)],
        "image": entry.image_url or None,
        "tags": [tag.name for tag in entry.tags.all()],
        "canonical": f"{base_url}/entries/{entry.pk}",
    }
    parts = [_frontmatter(meta), f"# {_line(entry.title)}", "", entry.swedish_summary, ""]
    if not entry.is_translated:
        parts += ["*Ej översatt ännu: texten ovan är ett utdrag på originalspråket.*", ""]
    parts.append(
        f"[Läs hela artikeln hos {_line(entry.feed.title)}]({entry.url}) "
        f"({credit(entry, site_name=site_name)})"
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
            f"({credit(entry, site_name=site_name)}{when})"
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
