"""Sources in and out as OPML, the format every feed reader imports and exports (Miniflux,
FreshRSS, Tiny Tiny RSS, Feedly).

Import reads every `<outline>` with an `xmlUrl`, at any depth (readers nest feeds in category
outlines; tt-rss adds outlines of its own preferences, which have none and are skipped). Each
outline is its own unit: a bad one is reported with its position and reason and the others are
still added; a source already registered (same URL) is left as it is, so importing a file again
adds nothing. A file that is not OPML at all is refused whole.

Export writes the article sources (not the service's own podcast feed) in title order, one
outline each, so that exporting, importing into an empty service and exporting again gives the
same outlines.
"""

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from django.db import transaction
from django.utils.translation import gettext
from lxml import etree

from news_site.news.cleaning import clean_text, clean_url
from news_site.news.feeds import feed_add
from news_site.news.models import Feed, FeedKind

# An OPML file of a few thousand sources is well under a megabyte.
MAX_OPML_BYTES = 5 * 1024 * 1024
TITLE_MAX_LENGTH = 200


class OpmlError(ValueError):
    """The file as a whole cannot be read as OPML."""


@dataclass(frozen=True)
class Outline:
    position: int  # 1-based, in document order among outlines with an xmlUrl
    url: str
    title: str
    site_url: str


@dataclass
class ImportReport:
    added: list[Feed] = field(default_factory=list)
    existing: list[Feed] = field(default_factory=list)
    # (position, what the outline said, why it was not imported)
    refused: list[tuple[int, str, str]] = field(default_factory=list)


def _parser() -> etree.XMLParser:
    # No entities, no DTD, no network: an OPML file cannot read local files (XXE) or expand
    # into gigabytes (billion laughs).
    return etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)


def opml_outlines(data: bytes) -> list[Outline | tuple[int, str, str]]:
    """The feed outlines of an OPML document, in document order; an outline whose address is
    unusable comes back as (position, its text, the reason)."""
    if len(data) > MAX_OPML_BYTES:
        raise OpmlError(
            gettext("the file is larger than %(megabytes)d MB")
            % {"megabytes": MAX_OPML_BYTES // (1024 * 1024)}
        )
    try:
        root = etree.fromstring(data, parser=_parser())
    except etree.XMLSyntaxError as exc:
        raise OpmlError(gettext("not XML: %(error)s") % {"error": exc}) from exc
    if not isinstance(root.tag, str) or etree.QName(root).localname != "opml":
        raise OpmlError(gettext("not OPML: the document's root is not <opml>"))
    found: list[Outline | tuple[int, str, str]] = []
    for element in root.iter("{*}outline"):
        raw_url = element.get("xmlUrl", element.get("xmlurl"))
        if raw_url is None:
            continue  # a category, or a reader's own settings
        position = len(found) + 1
        label = clean_text(element.get("title") or element.get("text") or "", max_length=200)
        url = clean_url(raw_url)
        if not url:
            reason = gettext("not an absolute http(s) address")
            found.append((position, label or raw_url[:200], reason))
            continue
        found.append(
            Outline(
                position=position,
                url=url,
                title=" ".join(label.split())[:TITLE_MAX_LENGTH],
                site_url=clean_url(element.get("htmlUrl") or element.get("htmlurl") or ""),
            )
        )
    return found


def opml_import(*, data: bytes) -> ImportReport:
    """Register the sources an OPML document lists (idempotent by URL); raises OpmlError when
    the document is not OPML."""
    report = ImportReport()
    for outline in opml_outlines(data):
        if not isinstance(outline, Outline):
            report.refused.append(outline)
            continue
        try:
            # Each outline on its own: one that fails leaves no half-made row behind.
            with transaction.atomic():
                feed, created = feed_add(url=outline.url, title=outline.title)
                if created and outline.site_url:
                    feed.site_url = outline.site_url
                    feed.save(update_fields=["site_url"])
        except ValueError as exc:
            report.refused.append((outline.position, outline.title or outline.url, str(exc)))
            continue
        (report.added if created else report.existing).append(feed)
    return report


def opml_export(*, feeds: Iterable[Feed], now: datetime) -> bytes:
    """An OPML 2.0 document of `feeds`."""
    root = etree.Element("opml", version="2.0")
    head = etree.SubElement(root, "head")
    etree.SubElement(head, "title").text = "Källor"
    etree.SubElement(head, "dateCreated").text = now.strftime("%a, %d %b %Y %H:%M:%S %z")
    body = etree.SubElement(root, "body")
    for feed in feeds:
        # A title typed in the admin may hold characters XML cannot carry; the export drops
        # them rather than refusing the whole file.
        title = clean_text(feed.title)
        attributes = {"type": "rss", "text": title, "title": title, "xmlUrl": clean_text(feed.url)}
        if feed.site_url:
            attributes["htmlUrl"] = clean_text(feed.site_url)
        etree.SubElement(body, "outline", attributes)
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True)


def exported_feeds() -> Iterable[Feed]:
    """The sources an export lists: every article source, active or not, by title."""
    return Feed.objects.filter(kind=FeedKind.ARTICLES).order_by("title", "pk")
