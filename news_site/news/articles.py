"""Article pages: the bytes a source sends, decoded and reduced to the article's own text, which
the model reads (never stored or shown) together with the page's og:image.

Decoding follows what a browser does (the HTML standard's "determine the character encoding",
without guessing): a byte order mark, the charset of the Content-Type header, a <meta charset>
or <meta http-equiv="Content-Type"> in the first 1024 bytes, else UTF-8. Labels browsers read
as windows-1252 (latin1, iso-8859-1, ascii) are read so too. Bytes invalid in the chosen
encoding become U+FFFD.

The main text is found with lxml (already a dependency; libxml2's parser is linear in the input
whatever it holds) in the way of readability-style extractors: page furniture is removed
(navigation, header, footer, sidebars, forms, and blocks whose class or id says menu, share,
related, comments, cookie, newsletter...), blocks that are mostly links are removed, then the
page's <article> or <main> is the text if it has one, else the element whose paragraphs hold the
most text. We chose this over trafilatura: it needs nothing new (trafilatura brings its own
date, URL and language libraries), and the model only needs the article's sentences without
menus and sidebars, not metadata or comments.
"""

import codecs
import re
from dataclasses import dataclass

from lxml import etree, html

from news_site.news.cleaning import clean_text, clean_url
from news_site.news.text import MAX_MARKUP_CHARS, html_meta, html_to_text

_PRESCAN_BYTES = 1024
_CHARSET_PARAMETER = re.compile(r"""charset\s*=\s*["']?\s*([A-Za-z0-9._:\-]+)""", re.IGNORECASE)
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9._:\-]+)""", re.I)
_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
# Labels the HTML standard maps to windows-1252, which is what such pages really hold.
_WINDOWS_1252 = frozenset({"latin1", "iso8859-1", "ascii"})

_FURNITURE_TAGS = (
    "script", "style", "noscript", "template", "svg", "nav", "header", "footer", "aside",
    "form", "iframe", "button", "select", "dialog", "menu",
)  # fmt: skip
_FURNITURE_NAMES = re.compile(
    r"(^|[\s_-])(nav|navbar|menu|sidebar|side-bar|footer|header|masthead|breadcrumbs?|comments?|"
    r"share|sharing|social|related|recommended|promo|advert|ads?|banner|cookies?|consent|"
    r"newsletter|subscribe|paywall|popup|modal|widget|toolbar|skip-link)($|[\s_-])",
    re.IGNORECASE,
)
# Names of the wrappers that hold the article itself, which a furniture word in the same name
# (`page-with-sidebar content`) does not make furniture.
_CONTENT_NAMES = re.compile(r"article|body|content|main|story|post|entry|text", re.IGNORECASE)
# A block whose text is mostly link text is a menu or a list of other articles.
_LINK_DENSITY_MAX = 0.5
_BLOCKS = ("div", "section", "ul", "ol", "table", "p")
# Paragraphs shorter than this are captions, bylines and buttons, not article text.
_PARAGRAPH_MIN_CHARS = 25


@dataclass(frozen=True)
class ArticlePage:
    text: str
    image_url: str


def article_read(*, body: bytes, content_type: str, base_url: str) -> ArticlePage:
    """The article's main text and og:image from a fetched page."""
    markup = clean_text(page_decode(body, content_type=content_type)[:MAX_MARKUP_CHARS])
    image = clean_url(html_meta(markup).get("og:image", ""), base=base_url)
    return ArticlePage(text=main_text(markup), image_url=image)


def page_decode(body: bytes, *, content_type: str) -> str:
    """The page as text, in the encoding it declares (see the module's docstring)."""
    for bom, encoding in _BOMS:
        if body.startswith(bom):
            return body[len(bom) :].decode(encoding, errors="replace")
    declared = _CHARSET_PARAMETER.search(content_type or "")
    if declared and (text := _decoded(body, declared.group(1))) is not None:
        return text
    meta = _META_CHARSET.search(body[:_PRESCAN_BYTES])
    label = meta.group(1).decode("ascii") if meta else ""
    # A page cannot really be UTF-16 once its bytes were read as ASCII to find this label.
    if label and not label.lower().replace("_", "-").startswith("utf-16"):
        text = _decoded(body, label)
        if text is not None:
            return text
    return body.decode("utf-8", errors="replace")


def _decoded(body: bytes, label: str) -> str | None:
    """`body` in the encoding `label` names, or None when it names none we can decode bytes
    with (unknown, or not a text encoding: `base64`, `rot13`)."""
    try:
        name = codecs.lookup(label.strip()).name
        return body.decode("cp1252" if name in _WINDOWS_1252 else name, errors="replace")
    except (LookupError, UnicodeError, ValueError, TypeError):
        return None


def main_text(markup: str) -> str:
    """The article's own text: paragraphs separated by blank lines, without page furniture."""
    if not markup.strip():
        return ""
    parser = html.HTMLParser(encoding="utf-8", no_network=True, recover=True, huge_tree=False)
    try:
        root = html.document_fromstring(markup.encode("utf-8", errors="replace"), parser=parser)
    except (etree.LxmlError, ValueError):
        return html_to_text(markup)
    _drop_furniture(root)
    chosen = _article_element(root)
    return html_to_text(etree.tostring(chosen, encoding="unicode", method="html"))


def _drop_furniture(root: html.HtmlElement) -> None:
    for element in list(root.iter(*_FURNITURE_TAGS)):
        _drop(element)
    page_chars = _paragraph_chars(root)
    for element in list(root.iter()):
        if not isinstance(element.tag, str) or element.tag in ("html", "body", "article", "main"):
            continue
        names = f"{element.get('class', '')} {element.get('id', '')}"
        named = _FURNITURE_NAMES.search(names) and not _CONTENT_NAMES.search(names)
        furniture = named or element.get("role") in ("navigation", "banner", "complementary")
        # A wrapper named after its sidebar (`page-with-sidebar`) may hold the article: what
        # holds most of the page's paragraphs is never furniture.
        if furniture and _paragraph_chars(element) * 2 <= page_chars:
            _drop(element)
    for element in list(root.iter(*_BLOCKS)):
        if element.getparent() is not None and _link_density(element) > _LINK_DENSITY_MAX:
            _drop(element)


def _drop(element: html.HtmlElement) -> None:
    # drop_tree keeps the text that follows the element (its tail), which belongs to the parent.
    if element.getparent() is not None:
        element.drop_tree()


def _link_density(element: html.HtmlElement) -> float:
    text = _chars(element)
    return sum(_chars(a) for a in element.iter("a")) / text if text else 0.0


def _chars(element: html.HtmlElement) -> int:
    return len(" ".join(element.text_content().split()))


def _article_element(root: html.HtmlElement) -> html.HtmlElement:
    marked = [
        *root.iter("article"),
        *root.iter("main"),
        *root.xpath("//*[@role='main' or @itemprop='articleBody']"),
    ]
    if marked:
        return max(marked, key=lambda element: (_paragraph_chars(element), _chars(element)))
    scores: dict[html.HtmlElement, float] = {}
    for paragraph in root.iter("p", "pre", "blockquote"):
        length = _chars(paragraph)
        parent = paragraph.getparent()
        if length < _PARAGRAPH_MIN_CHARS or parent is None:
            continue
        scores[parent] = scores.get(parent, 0.0) + length
        grandparent = parent.getparent()
        if grandparent is not None:
            scores[grandparent] = scores.get(grandparent, 0.0) + length / 2
    if not scores:
        return root.find("body") if root.find("body") is not None else root
    return max(scores, key=scores.__getitem__)


def _paragraph_chars(element: html.HtmlElement) -> int:
    return sum(_chars(p) for p in element.iter("p"))
