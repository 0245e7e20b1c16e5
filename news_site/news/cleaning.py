"""The one cleaning step for everything that comes from outside (feeds, pages, chapters,
transcripts), applied before anything is stored.

- Text: characters the database or XML cannot hold, and those no reader should be shown, are
  removed (the rule of `shared.untrusted_text`: NUL, C0/C1 controls except tab and newline,
  noncharacters such as U+FFFE, lone surrogates, bidirectional overrides and isolates: all
  of this text is published), and each field is cut to its column's length. The same rule
  applies again at output (agents.escaping), for rows stored before it.
- Numbers: finite and within range, or dropped (None).
- Dates: aware, within a plausible window, or dropped (None).
- URLs: resolved against the document's own URL, normalised with `iri_to_uri`, and only
  absolute http(s) URLs that fit their column are kept; anything else becomes "".
"""

import math
import time
from datetime import UTC, datetime
from urllib.parse import urljoin, urlsplit

from django.utils.encoding import iri_to_uri

from shared.untrusted_text import without_unpublishable

URL_MAX_LENGTH = 2000

# Plausible publication dates: nothing before the web, nothing far in the future.
_EARLIEST = datetime(1990, 1, 1, tzinfo=UTC)
_LATEST_AHEAD_DAYS = 366


def clean_text(value: object, *, max_length: int | None = None) -> str:
    """`value` as text the database and XML can hold and a reader may see, cut to
    `max_length` characters."""
    text = without_unpublishable(value if isinstance(value, str) else str(value or ""))
    return text[:max_length] if max_length is not None else text


def clean_int(value: object, *, low: int = 0, high: int = 2_147_483_647) -> int | None:
    """A finite number within [low, high] as an int, or None (NaN, Infinity, 1e400, junk)."""
    try:
        # Whatever a feed sent: what float() refuses is caught below.
        number = float(value) if not isinstance(value, int) else value  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return None
    if isinstance(number, float) and not math.isfinite(number):
        return None
    whole = int(number)
    return whole if low <= whole <= high else None


def clean_datetime(value: time.struct_time | datetime | None, *, now: datetime) -> datetime | None:
    """An aware UTC datetime within the plausible window, or None. Accepts feedparser's UTC
    struct_time, whose year may be 0 or past 9999 once the offset is applied."""
    if value is None:
        return None
    if isinstance(value, datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=UTC)
    else:
        try:
            moment = datetime(*value[:6], tzinfo=UTC)
        except (ValueError, OverflowError, TypeError):
            return None
    latest = now.timestamp() + _LATEST_AHEAD_DAYS * 86400
    if moment < _EARLIEST or moment.timestamp() > latest:
        return None
    return moment.astimezone(UTC)


def clean_url(value: object, *, base: str = "", max_length: int = URL_MAX_LENGTH) -> str:
    """An absolute http(s) URL resolved against `base` and normalised, or "" when the value
    is empty, of another scheme (javascript:, data:, mailto:), has no host, or is too long
    for its column once normalised (cutting a URL would point somewhere else)."""
    raw = clean_text(value).strip()
    if not raw:
        return ""
    try:
        absolute = urljoin(base, raw) if base else raw
        url = iri_to_uri(absolute)
        parts = urlsplit(url)
        _ = parts.port  # raises ValueError for a port out of range
    except ValueError:
        return ""
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return ""
    # iri_to_uri keeps characters some clients refuse in a URI; quote the ones that break
    # markup and `format: uri` (space, quotes, angle brackets, backslash, braces, pipe, caret).
    url = url.translate(_URI_UNSAFE)
    return url if len(url) <= max_length else ""


_URI_UNSAFE = str.maketrans(
    {
        " ": "%20",
        '"': "%22",
        "<": "%3C",
        ">": "%3E",
        "\\": "%5C",
        "^": "%5E",
        "`": "%60",
        "{": "%7B",
        "|": "%7C",
        "}": "%7D",
        "\t": "",
        "\n": "",
        "\r": "",
    }
)
