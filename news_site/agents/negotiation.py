"""Content negotiation between HTML and markdown on the same URL.

Honours q values; `*/*` and `text/*` say nothing about a preference, so they are ignored and
a browser (which sends `text/html,...,*/*;q=0.8`) still gets HTML.
"""

_MARKDOWN = frozenset({"text/markdown", "text/x-markdown"})
_HTML = frozenset({"text/html", "application/xhtml+xml"})


def _q(params: list[str]) -> float:
    for param in params:
        name, _, value = param.strip().partition("=")
        if name.strip().lower() == "q":
            try:
                return min(max(float(value), 0.0), 1.0)
            except ValueError:
                return 0.0
    return 1.0


def prefers_markdown(accept: str) -> bool:
    """Whether the Accept header asks for markdown over HTML. Ties go to the type listed first."""
    best: dict[str, tuple[float, int]] = {}
    for position, item in enumerate(accept.split(",")[:50]):
        media, *params = item.split(";")
        media = media.strip().lower()
        kind = "markdown" if media in _MARKDOWN else "html" if media in _HTML else None
        if kind is None:
            continue
        q = _q(params)
        if kind not in best or q > best[kind][0]:
            best[kind] = (q, position)
    markdown_q, markdown_at = best.get("markdown", (0.0, 0))
    html_q, html_at = best.get("html", (0.0, 0))
    if markdown_q <= 0:
        return False
    return markdown_q > html_q or (markdown_q == html_q and markdown_at < html_at)
