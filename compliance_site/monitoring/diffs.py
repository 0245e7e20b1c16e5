"""What a reviewer reads when a monitored page changed: the page's normalised text one
paragraph a line, and a unified diff of paragraphs against the previous successful fetch."""

import difflib
from datetime import datetime

# The text kept per snapshot and the longest diff, in characters (about 200 KB of ASCII).
SNAPSHOT_TEXT_MAX_CHARS = 200_000
_CUT = "[... cut: the monitor keeps {limit} characters]"


def text_bounded(paragraphs: list[str], limit: int = SNAPSHOT_TEXT_MAX_CHARS) -> str:
    """The paragraphs one a line, cut at a paragraph boundary so that the diff of two long
    pages still compares whole paragraphs."""
    return _bounded("\n".join(paragraphs), limit)


def text_diff(*, before: str, after: str, before_at: datetime, after_at: datetime, url: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(),
        after.splitlines(),
        fromfile=f"{url} fetched {before_at.isoformat(timespec='seconds')}",
        tofile=f"{url} fetched {after_at.isoformat(timespec='seconds')}",
        lineterm="",
        n=1,
    )
    return _bounded("\n".join(lines), SNAPSHOT_TEXT_MAX_CHARS)


def _bounded(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    marker = _CUT.format(limit=limit)
    cut = text.rfind("\n", 0, limit - len(marker) - 1)
    return text[: max(cut, 0)] + "\n" + marker
