"""One escaping function per output format the agent surfaces write: markdown text, markdown
link destinations, YAML front matter, RSS/XML text. Every value from a feed passes one of these
on its way out, including values stored before ingest cleaned them (escape at output, not only
clean at input)."""

import html
import json
import re

from news_site.news.cleaning import clean_text, clean_url

# Characters that start inline markup in CommonMark/GFM: emphasis, code, links and images
# (`[`), tables, strikethrough. (`<` and `&` become entities instead.)
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]|~])")
# What starts a block at the beginning of a line: heading, list, quote, rule, ordered list.
# CommonMark escapes ASCII punctuation only, so an ordered list marker keeps its digits and
# escapes what follows them (`1\.`): `\1.` would show the backslash.
_BLOCK_START = re.compile(r"^(\s*)([#+\-=>])|^(\s*\d+)([.)])")
# Characters YAML reads as line breaks inside a quoted scalar, which JSON leaves as they are;
# and `<`, `>`, `&` as escapes, so no markup reaches a renderer that shows front matter raw
# (the parsed value is unchanged).
_YAML_ESCAPES = str.maketrans(
    {
        "\u0085": "\\u0085",
        "\u2028": "\\u2028",
        "\u2029": "\\u2029",
        "<": "\\u003c",
        ">": "\\u003e",
        "&": "\\u0026",
    }
)


def markdown_text(value: str) -> str:
    """Feed text as literal markdown on one line: no raw HTML (`<` and `&` become entities, which
    CommonMark shows as the characters), no live link, image, emphasis or heading syntax."""
    flat = " ".join(clean_text(value).split())
    entities = flat.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MARKDOWN_SPECIAL.sub(r"\\\1", entities)


def markdown_block(value: str) -> str:
    """Multi-paragraph feed text (summaries, show notes): each paragraph as markdown_text."""
    paragraphs = (markdown_text(p) for p in clean_text(value).split("\n\n"))
    return "\n\n".join(_BLOCK_START.sub(_escape_block_start, p) for p in paragraphs if p)


def _escape_block_start(match: re.Match[str]) -> str:
    before, marker = (match[1], match[2]) if match[2] else (match[3], match[4])
    return f"{before}\\{marker}"


def markdown_link(text: str, url: str) -> str:
    """`[text](url)` when `url` is an absolute http(s) URL, else the text alone. The
    destination is cleaned again here (rows stored before cleaning); clean_url has
    percent-encoded spaces and angle brackets, and parentheses are encoded here, so nothing in
    it can end the destination early."""
    safe = clean_url(url).replace("(", "%28").replace(")", "%29")
    label = markdown_text(text) or markdown_text(safe)
    return f"[{label}]({safe})" if safe else label


def safe_url(url: str) -> str | None:
    """A stored URL as any surface may give it: absolute http(s), normalised, else None."""
    return clean_url(url) or None


def yaml_scalar(value: object) -> str:
    """One front matter value: JSON (valid YAML) of the cleaned value, so it always parses:
    C1 controls, U+007F and noncharacters are not allowed in YAML, even escaped. Markup
    characters are escaped (`\\u003c`), so the raw document never holds a tag."""
    return json.dumps(_cleaned(value), ensure_ascii=False).translate(_YAML_ESCAPES)


def _cleaned(value: object) -> object:
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, list):
        return [_cleaned(item) for item in value]
    if isinstance(value, dict):
        return {clean_text(key): _cleaned(item) for key, item in value.items()}
    return value


def xml_text(value: str) -> str:
    """Text an XML serializer can write: characters XML 1.0 forbids are removed (the serializer
    escapes `<` and `&` itself)."""
    return clean_text(value)


def rss_html(value: str) -> str:
    """Plain text for an RSS element readers decode as HTML (`<description>`): HTML-escaped,
    so a stored `<script>` reaches the reader as text."""
    return html.escape(clean_text(value), quote=False)
