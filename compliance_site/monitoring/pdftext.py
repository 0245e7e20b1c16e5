"""The text of a PDF, so that a regenerated PDF (new creation date, new object order, same
words) compares equal. pypdf reads it; anything it cannot read (a scan without text, a broken
or hostile file) is None, and the monitor compares that PDF's bytes instead."""

import io
import logging

from pypdf import PdfReader

logger = logging.getLogger(__name__)

# Government forms run to a few dozen pages; past this many the rest is not read, which keeps
# a hostile file from holding the run.
MAX_PAGES = 200


def is_pdf(media_type: str, body: bytes) -> bool:
    return media_type == "application/pdf" or body[:5] == b"%PDF-"


def pdf_text(body: bytes) -> str | None:
    """The PDF's text, one line per line of text, or None when it has none or is unreadable."""
    try:
        reader = PdfReader(io.BytesIO(body), strict=False)
        text = "\n".join(page.extract_text() or "" for page in reader.pages[:MAX_PAGES])
    except Exception as exc:  # pypdf raises many kinds on broken files; each means "no text"
        logger.info("a PDF could not be read, its bytes are compared: %s", exc)
        return None
    return text if text.strip() else None
