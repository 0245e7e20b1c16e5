"""Pure text helpers for ingestion: canonical URLs, HTML to text, fingerprints, excerpts."""

import hashlib
import html
import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from lxml import etree

# Query parameters that identify a campaign or a reader, never the article.
_TRACKING_PREFIXES = ("utm_", "mtm_", "pk_", "at_", "itm_")
_TRACKING_NAMES = frozenset(
    {
        "fbclid",
        "gclid",
        "dclid",
        "msclkid",
        "mc_cid",
        "mc_eid",
        "igshid",
        "yclid",
        "_hsenc",
        "_hsmi",
        "ref",
        "ref_src",
        "cmpid",
        "ncid",
        "guccounter",
        "smid",
        "spm",
        "soc_src",
        "soc_trk",
    }
)
_DEFAULT_PORTS = {"http": 80, "https": 443}
_WHITESPACE = re.compile(r"\s+")
# A sentence ends at . ! ? followed by space and an upper-case letter or a digit.
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+(?=[\"'”»(\[]?[A-ZÅÄÖÉ0-9])")
# "The post X appeared first on Y." and similar feed boilerplate.
_BOILERPLATE = re.compile(
    r"(the post .{1,300} appeared first on .{1,100}$)|(läs mer\W*$)|(continue reading.*$)|"
    r"(read more.*$)|(\[(…|\.\.\.)\]\s*$)",
    re.IGNORECASE,
)


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def canonical_url(url: str) -> str:
    """The URL with tracking parameters, fragment, default port and host case removed."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if host.startswith("www."):
        host = host[4:]
    netloc = host
    if parts.port and parts.port != _DEFAULT_PORTS.get(scheme):
        netloc = f"{host}:{parts.port}"
    query = [
        (name, value)
        for name, value in parse_qsl(parts.query, keep_blank_values=True)
        if not (name.lower() in _TRACKING_NAMES or name.lower().startswith(_TRACKING_PREFIXES))
    ]
    path = parts.path or "/"
    # http and https serve the same article; compare them as one.
    if scheme == "http":
        scheme = "https"
    return urlunsplit((scheme, netloc, path, urlencode(sorted(query)), ""))


# Markup handed to the HTML parser is cut here (an article page is rarely longer; what the
# model reads is its first 12,000 characters of text), so the parser's cost stays bounded
# whatever a source sends. Callers pass a lower cap for feed items (news.parsing).
MAX_MARKUP_CHARS = 1_000_000


class _TextExtractor:
    """A parser target for lxml's HTML parser (libxml2): linear in the input whatever it holds
    (the standard library's HTMLParser rescans unterminated `<!--` or `<a href="` from every
    position, quadratic: 1 MB of `<!--` held an ingest run for minutes)."""

    _SKIP = frozenset({"script", "style", "noscript", "template", "svg", "nav", "footer", "aside"})
    _BLOCK = frozenset({"p", "div", "br", "li", "h1", "h2", "h3", "h4", "blockquote", "section"})

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.links: list[tuple[str, str]] = []
        self.meta: dict[str, str] = {}
        self._skipping = 0
        self._href: str | None = None
        self._link_text: list[str] = []

    def start(self, tag: str, attrib: dict[str, str]) -> None:
        tag = tag.lower()
        if tag in self._SKIP:
            self._skipping += 1
        elif tag in self._BLOCK:
            self.parts.append("\n")
        if tag == "meta":
            key = attrib.get("property") or attrib.get("name")
            if key and "content" in attrib:
                self.meta.setdefault(key.lower(), attrib["content"])
        if tag == "a" and (attrib.get("href") or "").startswith(("http://", "https://")):
            self._href = attrib["href"]
            self._link_text = []

    def end(self, tag: str) -> None:
        tag = tag.lower()
        if tag in self._SKIP and self._skipping:
            self._skipping -= 1
        elif tag in self._BLOCK:
            self.parts.append("\n")
        if tag == "a" and self._href:
            self.links.append((" ".join("".join(self._link_text).split()), self._href))
            self._href = None

    def data(self, data: str) -> None:
        if not self._skipping:
            # Line breaks in the source are plain whitespace; only block tags start paragraphs.
            self.parts.append(_WHITESPACE.sub(" ", data))
            if self._href:
                self._link_text.append(data)

    def comment(self, text: str) -> None:
        pass

    def close(self) -> None:
        pass


def _extract(markup: str, max_chars: int = MAX_MARKUP_CHARS) -> _TextExtractor:
    extractor = _TextExtractor()
    markup = markup[:max_chars]
    if not markup.strip():
        return extractor
    parser = etree.HTMLParser(target=extractor, no_network=True, recover=True, huge_tree=False)
    try:
        parser.feed(markup)
        parser.close()
    except etree.LxmlError:
        # libxml2 recovers from any markup; what it read before giving up is kept.
        pass
    return extractor


def html_to_text(markup: str, *, max_chars: int = MAX_MARKUP_CHARS) -> str:
    """Readable text of an HTML fragment or page (its first `max_chars` characters of markup),
    paragraphs separated by blank lines."""
    text = "".join(_extract(markup, max_chars).parts)
    paragraphs = (_WHITESPACE.sub(" ", block).strip() for block in text.split("\n"))
    return "\n\n".join(p for p in paragraphs if p)


def html_links(markup: str, *, max_chars: int = MAX_MARKUP_CHARS) -> list[tuple[str, str]]:
    """(text, href) of the absolute links in an HTML fragment."""
    return _extract(markup, max_chars).links


def html_meta(markup: str) -> dict[str, str]:
    """The page's <meta> properties and names (og:image, description...), lower-cased keys."""
    return _extract(markup).meta


def fingerprint(*, title: str, text: str) -> str:
    """Stable across whitespace and markup changes, so only a real edit changes it."""
    normalised = _WHITESPACE.sub(" ", f"{title}\n{text}").strip().lower()
    return sha256(normalised)


def sentences(text: str) -> list[str]:
    flat = _WHITESPACE.sub(" ", html.unescape(text)).strip()
    return [s.strip() for s in _SENTENCE_END.split(flat) if s.strip()]


def excerpt(text: str, *, max_sentences: int = 3, max_chars: int = 400) -> str:
    """The lead sentences of `text` (lead-based extraction, the standard baseline for news),
    without feed boilerplate, never cut inside a sentence unless the first one is too long."""
    chosen: list[str] = []
    length = 0
    for sentence in sentences(text):
        sentence = _BOILERPLATE.sub("", sentence).strip()
        if not sentence:
            continue
        if chosen and (len(chosen) >= max_sentences or length + len(sentence) > max_chars):
            break
        chosen.append(sentence)
        length += len(sentence) + 1
    summary = " ".join(chosen)
    if len(summary) > max_chars:
        summary = summary[: max_chars - 1].rsplit(" ", 1)[0] + "…"
    return summary
