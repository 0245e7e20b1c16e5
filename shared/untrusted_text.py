"""The one rule for characters from outside that no store can hold, shared by both services.

Text arrives from feeds, article pages, model answers, state files, commit metadata and request
bodies. Some characters cannot be stored or served faithfully anywhere we put text:

- NUL: PostgreSQL's text type refuses it (`\\u0000 cannot be converted to text`), SQLite keeps it,
  so the two backends would disagree.
- Other C0 controls (but tab, newline and carriage return), DEL and the C1 block: XML 1.0 refuses
  most of them, terminals and log readers interpret them.
- Lone surrogates (U+D800-U+DFFF alone): not Unicode scalar values; UTF-8 cannot encode them.
- Noncharacters (U+FDD0-U+FDEF and U+xFFFE/U+xFFFF in every plane): reserved for internal use.
- Bidirectional overrides and isolates (U+202A-U+202E, U+2066-U+2069): they reorder what a
  reader sees ("Trojan Source"), so published text never carries them.

Each surface decides whether such a character is removed (feed items, model answers: the rest
of the text is still worth having) or refuses the whole unit (a state file: a reviewer must see
exactly what is published). Both use the same definition, from here.
"""

import re

# Carriage return is kept by this class: callers that want one line fold it with the newlines.
_CONTROLS = "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f"
_SURROGATES = "\ud800-\udfff"
_NONCHARACTERS = "\ufdd0-\ufdef" + "".join(
    f"{chr(plane * 0x10000 + 0xFFFE)}{chr(plane * 0x10000 + 0xFFFF)}" for plane in range(17)
)
_BIDI_CONTROLS = "\u202a-\u202e\u2066-\u2069"

UNSTORABLE = re.compile(f"[{_CONTROLS}{_SURROGATES}{_NONCHARACTERS}]")
UNPUBLISHABLE = re.compile(f"[{_CONTROLS}{_SURROGATES}{_NONCHARACTERS}{_BIDI_CONTROLS}]")


def without_unstorable(text: str) -> str:
    """`text` without the characters no database, XML document or log can hold."""
    return UNSTORABLE.sub("", text)


def without_unpublishable(text: str) -> str:
    """`text` without unstorable characters and without bidirectional overrides: what may be
    shown to a reader."""
    return UNPUBLISHABLE.sub("", text)


def first_unpublishable(text: str) -> tuple[int, str] | None:
    """The position and code point (`U+0000`) of the first character `text` may not publish,
    or None: for refusing a whole unit with a message that says where."""
    found = UNPUBLISHABLE.search(text)
    if found is None:
        return None
    return found.start(), f"U+{ord(found.group()):04X}"
