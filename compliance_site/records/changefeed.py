"""The change feed: keyset pages over change events, newest first.

A page is ordered by (committed_at, sequence) descending. Its cursor is signed with the
service's secret, versioned, bound to the filters it was issued for, and pinned to the highest
sequence that existed when the first page was read, so paging while reindex publishes yields an
exact, gap-free and duplicate-free walk of that snapshot.

`committed_at` is never later than an event's publication and never earlier than the previous
event's (records/publishing.py), so this order is publication order and a client that syncs with
`since` loses nothing, whatever dates commits claim. The `sync_token` in every page's meta does
the same by sequence: sending it back returns exactly the events published after it.
"""

import hashlib
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.core import signing
from django.db.models import Q, QuerySet

from compliance_site.records.models import ResourceVersion
from compliance_site.records.selectors import change_feed_high_water

CURSOR_VERSION = 1
MAX_TOKEN_LENGTH = 512
_CURSOR_SALT = "compliance.changes.cursor"
_SYNC_SALT = "compliance.changes.sync"


class InvalidToken(Exception):
    """A cursor or sync token that was forged, garbled, expired in format or misapplied."""


@dataclass(frozen=True)
class FeedFilters:
    since: datetime | None = None
    resource_type: str | None = None
    after_sequence: int | None = None  # from a sync token

    def fingerprint(self) -> str:
        text = f"{self.since.isoformat() if self.since else ''}|{self.resource_type or ''}|"
        text += str(self.after_sequence or "")
        return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Position:
    committed_at: datetime
    sequence: int
    high_water: int


@dataclass(frozen=True)
class Page:
    events: list[dict[str, Any]]  # the columns asked for, plus committed_at and sequence
    next_cursor: str | None
    sync_token: str


def cursor_encode(position: Position, filters: FeedFilters) -> str:
    return signing.Signer(salt=_CURSOR_SALT).sign_object(
        {
            "v": CURSOR_VERSION,
            "f": filters.fingerprint(),
            "t": position.committed_at.isoformat(),
            "s": position.sequence,
            "h": position.high_water,
        },
        compress=True,
    )


def cursor_decode(token: str, filters: FeedFilters) -> Position:
    data = _unsign(token, _CURSOR_SALT)
    if data.get("v") != CURSOR_VERSION:
        raise InvalidToken("the cursor is of an unknown version; start again without a cursor")
    if data.get("f") != filters.fingerprint():
        raise InvalidToken("the cursor was issued for other filters (since, resource_type)")
    try:
        return Position(
            committed_at=datetime.fromisoformat(data["t"]),
            sequence=int(data["s"]),
            high_water=int(data["h"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidToken("the cursor is not valid") from exc


def sync_token_encode(high_water: int) -> str:
    return signing.Signer(salt=_SYNC_SALT).sign_object({"v": CURSOR_VERSION, "s": high_water})


def sync_token_decode(token: str) -> int:
    data = _unsign(token, _SYNC_SALT)
    sequence = data.get("s")
    if data.get("v") != CURSOR_VERSION or not isinstance(sequence, int) or sequence < 0:
        raise InvalidToken("the sync token is not valid")
    return sequence


def _unsign(token: str, salt: str) -> dict[str, Any]:
    if len(token) > MAX_TOKEN_LENGTH:
        raise InvalidToken("the token is too long to be one of ours")
    try:
        data = signing.Signer(salt=salt).unsign_object(token)
    except (signing.BadSignature, ValueError, UnicodeDecodeError) as exc:
        raise InvalidToken("the token is not valid") from exc
    if not isinstance(data, dict):
        raise InvalidToken("the token is not valid")
    return data


def change_page(
    *, filters: FeedFilters, limit: int, columns: tuple[str, ...], cursor: str | None = None
) -> Page:
    if cursor:
        position = cursor_decode(cursor, filters)
        high_water = position.high_water
    else:
        position = None
        high_water = change_feed_high_water()
    events = _filtered(filters, high_water)
    if position is not None:
        events = events.filter(
            Q(committed_at__lt=position.committed_at)
            | Q(committed_at=position.committed_at, sequence__lt=position.sequence)
        )
    ordered = events.order_by("-committed_at", "-sequence")
    rows = list(ordered.values(*columns, "committed_at", "sequence")[: limit + 1])
    next_cursor = None
    if len(rows) > limit:
        rows = rows[:limit]
        last = rows[-1]
        position = Position(last["committed_at"], last["sequence"], high_water)
        next_cursor = cursor_encode(position, filters)
    return Page(events=rows, next_cursor=next_cursor, sync_token=sync_token_encode(high_water))


def _filtered(filters: FeedFilters, high_water: int) -> QuerySet[ResourceVersion]:
    events = ResourceVersion.objects.filter(sequence__lte=high_water)
    if filters.since is not None:
        events = events.filter(committed_at__gte=filters.since)
    if filters.resource_type:
        events = events.filter(resource_type=filters.resource_type)
    if filters.after_sequence is not None:
        events = events.filter(sequence__gt=filters.after_sequence)
    return events
