"""The legacy endpoints' one query parameter, parsed in one place."""

from django.http import QueryDict

DEFAULT_ITEMS = 30
MAX_ITEMS = 100


def items_param(query: QueryDict) -> int:
    """`items`: optional, capped at 100. Old app versions send odd values (empty, zero,
    negative, huge, not a number); they get the default or the cap rather than an error."""
    raw = query.get("items", "").strip()
    if not (raw.isascii() and raw.isdigit()):
        return DEFAULT_ITEMS
    # Very long digit strings are never converted: they are over the cap whatever they say.
    value = int(raw) if len(raw) <= 9 else MAX_ITEMS
    return min(value, MAX_ITEMS) if value > 0 else DEFAULT_ITEMS
