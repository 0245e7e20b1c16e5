"""What counts as "the page changed" for the weekly source monitor.

A state gets flagged for human review whenever the hash of one of its government pages moves,
so the hash must follow what a reader sees and nothing else: not markup, scripts, CSRF tokens,
clocks, "last updated" stamps or visitor counters. Each of those would flag every state every
week and teach reviewers to ignore the flags.
"""

import codecs
import hashlib
import re
import unicodedata
from email.message import Message

from lxml import etree

from compliance_site.monitoring.pdftext import is_pdf, pdf_text
from shared.untrusted_text import without_unpublishable

# 2: HTML read by libxml2 (lxml) instead of html.parser, with the length caps.
# 3: PDFs compared by their text (pdftext.py), bytes only when they have none.
NORMALIZER_VERSION = 3

_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_TEXT_TYPES = frozenset({"application/json", "application/xml", "application/javascript"})

# Elements whose content a reader never sees as page text.
_INVISIBLE = frozenset(
    {"script", "style", "noscript", "template", "svg", "math", "iframe", "object", "canvas"}
)
_VOID = frozenset(
    {
        "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param",
        "source", "track", "wbr",
    }
)  # fmt: skip
# Elements that break a line when rendered. Only these become spaces, so "<b>Hel</b>lo" stays
# one word while "<p>a</p><p>b</p>" and "<p>a</p>\n<p>b</p>" both read "a b".
_BLOCKS = frozenset(
    {
        "address", "article", "aside", "blockquote", "body", "br", "caption", "dd", "details",
        "dialog", "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1",
        "h2", "h3", "h4", "h5", "h6", "head", "header", "hgroup", "hr", "html", "img", "li",
        "main", "nav", "ol", "option", "p", "pre", "section", "select", "summary", "table",
        "tbody", "td", "tfoot", "th", "thead", "title", "tr", "ul",
    }
)  # fmt: skip

_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_WEEKDAY = (
    r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday"
    r"|mon|tues?|wed|thu(?:rs?)?|fri|sat|sun)\.?"
)
_ZONE = r"(?:utc|gmt|[ecmp][sd]?t)"
_TIME = rf"\d{{1,2}}:\d{{2}}(?::\d{{2}}(?:\.\d+)?)?(?!\d)(?:\s*[ap]\.?\s?m\b\.?)?(?:\s*{_ZONE}\b)?"
_DATES = [
    # 2026-11-22, optionally with an ISO time and offset.
    r"\b\d{4}-\d{2}-\d{2}(?:t\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:z|[+-]\d{2}:?\d{2})?)?\b",
    # 11/22/2026, 11/22/26
    r"\b\d{1,2}/\d{1,2}/(?:\d{4}|\d{2})\b",
    # (Sunday,) November 22, 2026 / Nov. 22nd 2026
    rf"\b(?:{_WEEKDAY},?\s+)?{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}\b",
    rf"\b{_TIME}",
]
# After "Last updated" and friends, any date-like run goes, whatever its format
# ("14 March 2026", "3/14/26 at 9 am"), since the phrase says the value is a timestamp. Without
# "last", a colon is required so that "updated guidance for 2026" keeps its year.
_STAMP_LABEL = (
    r"\b(?:(?:page\s+|date\s+)?last\s+(?:updated|modified|reviewed|revised)(?:\s+on)?\s*:?"
    r"|(?:updated|modified|reviewed|revised)(?:\s+on)?\s*:)"
)
_STAMP_PART = rf"(?:\d{{1,4}}(?:st|nd|rd|th)?|{_MONTH}|{_WEEKDAY}|at|on|[ap]\.?m\.?|{_ZONE})"
_STAMP = re.compile(rf"({_STAMP_LABEL})(?:[\s,./:-]*{_STAMP_PART}(?![a-z0-9]))+", re.IGNORECASE)
_VOLATILE = [
    _STAMP,
    *(re.compile(pattern, re.IGNORECASE) for pattern in _DATES),
    # Session ids, cache busters, nonces: 24+ token characters with at least one digit (so
    # long plain words survive).
    re.compile(r"(?<![\w+/=-])(?=[\w+/=-]*\d)[\w+/=-]{24,}(?![\w+/=-])", re.ASCII),
    re.compile(
        r"(?<!\w)(?<!\d[,.])\d[\d,.]*+\s+(?:unique\s+)?(?:visitors?|visits|page\s*views|hits)\b"
        r"|\b(?:visitors?|visits|page\s*views|hits)(?:\s+(?:count|number))?\s*[:#]\s*\d[\d,.]*",
        re.IGNORECASE,
    ),
]
# Characters that render as nothing; editors and CMSes add and drop them at will.
_INVISIBLE_CHARS = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"))
# The longest HTML page (in characters) the monitor reads. The parser and the patterns are
# linear (none backtracks), but a page at the 5 MiB body cap would still cost the run seconds.
# A longer page is refused (PageTooLong) rather than compared in part: any cut by position
# moves whenever a token before it changes length, and would flag the page every week.
# The MONITOR_MAX_READ_CHARS setting raises it.
MAX_READ_CHARS = 300_000


class PageTooLong(ValueError):
    """The page's HTML is longer than the monitor reads."""


_META_CHARSET = re.compile(rb"<meta[^>]+charset\s*=\s*[\"']?\s*([a-zA-Z0-9_.:-]+)", re.IGNORECASE)


def normalized_text(
    body: bytes, content_type: str | None, *, max_chars: int = MAX_READ_CHARS
) -> str:
    """The text a reader would compare, with volatile tokens removed, for HTML and text
    bodies; "" for binary bodies, which have no text to normalise (content_hash hashes their
    bytes instead). Raises PageTooLong for HTML longer than `max_chars`."""
    media_type, charset = _media_type(body, content_type)
    if media_type in _HTML_TYPES:
        html = _decode(body, charset or _meta_charset(body))
        if len(html) > max_chars:
            raise PageTooLong(
                f"the page's HTML is {len(html)} characters long; the monitor reads up to "
                f"{max_chars} (MONITOR_MAX_READ_CHARS)"
            )
        return _readable(html)
    if _is_text(media_type):
        return _collapse(_decode(body, charset))
    return ""


def _readable(html: str) -> str:
    """The visible text of `html` without volatile tokens, whitespace collapsed."""
    return _scrub(_visible_text(html))


def _scrub(text: str) -> str:
    # Collapse first so the patterns see plain spaces, again after to close the gaps.
    text = _collapse(text)
    for pattern in _VOLATILE:
        text = pattern.sub(r"\1" if pattern is _STAMP else "", text)
    return _collapse(text)


def page_paragraphs(
    body: bytes, content_type: str | None, *, max_chars: int = MAX_READ_CHARS
) -> list[str]:
    """What a reviewer diffs: the normalised text one paragraph (block element, text line,
    PDF line) at a time, volatile tokens removed as for the hash. [] for binary bodies other
    than readable PDFs. Raises PageTooLong like normalized_text."""
    media_type, charset = _media_type(body, content_type)
    if media_type in _HTML_TYPES:
        html = _decode(body, charset or _meta_charset(body))
        if len(html) > max_chars:
            raise PageTooLong(f"the page's HTML is {len(html)} characters long")
        text = _visible_text(html, block="\n")
    elif _is_text(media_type):
        text = _decode(body, charset)
    elif is_pdf(media_type, body):
        text = pdf_text(body) or ""
    else:
        return []
    # Stored and shown to reviewers: nothing a database cannot hold or that reorders the text.
    text = without_unpublishable(text)
    return [paragraph for line in text.split("\n") if (paragraph := _scrub(line))]


def content_hash(body: bytes, content_type: str | None, *, max_chars: int = MAX_READ_CHARS) -> str:
    """The "sha256:<hex>" digest of normalized_text; for a PDF, of its text when it has one;
    of the raw bytes for other binary bodies and unreadable PDFs."""
    media_type, _ = _media_type(body, content_type)
    if media_type in _HTML_TYPES or _is_text(media_type):
        data = normalized_text(body, content_type, max_chars=max_chars).encode("utf-8")
    elif is_pdf(media_type, body) and (text := pdf_text(body)) is not None:
        data = b"pdf-text\n" + _scrub(text).encode("utf-8")
    else:
        data = body
    return "sha256:" + hashlib.sha256(data).hexdigest()


class _VisibleText:
    """A parser target for lxml's HTML parser (libxml2: linear time on any markup, where the
    standard library's html.parser takes quadratic time on runs of `<a `, `<x` or `<!--`)."""

    def __init__(self, block: str) -> None:
        # What a block boundary becomes: a space for the hash, a newline for paragraphs.
        self._block = block
        self.parts: list[str] = []
        self._hidden_tag: str | None = None
        self._hidden_depth = 0

    def start(self, tag: str, attrib: dict[str, str]) -> None:
        if self._hidden_tag is not None:
            if tag == self._hidden_tag:
                self._hidden_depth += 1
            return
        # Attributes never reach the text, which is what drops hidden inputs, CSRF tokens and
        # <meta> content; elements marked hidden are skipped with their content.
        if tag not in _VOID and (tag in _INVISIBLE or _is_hidden(attrib)):
            self._hidden_tag, self._hidden_depth = tag, 1
        elif tag in _BLOCKS:
            self.parts.append(self._block)

    def end(self, tag: str) -> None:
        if self._hidden_tag is not None:
            if tag == self._hidden_tag:
                self._hidden_depth -= 1
                if self._hidden_depth == 0:
                    self._hidden_tag = None
            return
        if tag in _BLOCKS:
            self.parts.append(self._block)

    def data(self, data: str) -> None:
        if self._hidden_tag is None:
            # Line breaks inside a text node are source formatting, not paragraph breaks.
            self.parts.append(data.replace("\r", " ").replace("\n", " "))

    def close(self) -> str:
        return "".join(self.parts)


def _is_hidden(attrib: dict[str, str]) -> bool:
    if not attrib:
        return False  # most elements: spares two lookups on lxml's mapping
    return "hidden" in attrib or (attrib.get("aria-hidden") or "").lower() == "true"


def _visible_text(html: str, block: str = " ") -> str:
    if not html.strip():
        return ""
    parser = etree.HTMLParser(
        target=_VisibleText(block),
        encoding="utf-8",
        recover=True,
        no_network=True,
        remove_comments=True,
        remove_pis=True,
    )
    # Bytes with the encoding fixed, so that an XML declaration naming another encoding cannot
    # make libxml2 refuse or re-decode the text.
    text: str = etree.fromstring(html.encode("utf-8", errors="replace"), parser)
    return text


def _media_type(body: bytes, content_type: str | None) -> tuple[str, str | None]:
    if not content_type:
        # No header: only HTML needs telling apart, since it is the type with volatile parts.
        head = body[:512].lstrip().lower()
        is_html = head.startswith((b"<!doctype html", b"<html"))
        return ("text/html" if is_html else "application/octet-stream"), None
    message = Message()
    message["Content-Type"] = content_type
    return message.get_content_type(), message.get_content_charset()


def _is_text(media_type: str) -> bool:
    return (
        media_type.startswith("text/")
        or media_type in _TEXT_TYPES
        or media_type.endswith(("+xml", "+json"))
    )


def _meta_charset(body: bytes) -> str | None:
    match = _META_CHARSET.search(body[:4096])
    return match[1].decode("ascii") if match else None


def _decode(body: bytes, charset: str | None) -> str:
    """The body as text in its declared charset, or as UTF-8 when the page declares one that
    is unknown or not a text encoding (`rot13`, `base64`, `idna`, `undefined`)."""
    try:
        return body.decode(codecs.lookup(charset or "utf-8").name, errors="replace")
    except (LookupError, UnicodeError, ValueError, TypeError):
        return body.decode("utf-8", errors="replace")


def _collapse(text: str) -> str:
    text = unicodedata.normalize("NFC", text).translate(_INVISIBLE_CHARS)
    return " ".join(text.split())
