"""Entries as the /api/v1 lists read them: a page of plain rows from one statement written as
SQL, and the page's tags from one more.

Building a list's query through the ORM (the query set, its values(), the cursor's keys and
filter, then compiling it) and turning its rows into dicts cost more CPU than everything else
a page rendered with nothing kept (docs/api-performance.md). A list here is named by what it
holds (`EntryListing`: newest or most viewed, of all sources, some sources or one tag), and
each shape's statement is written once per process.

The lists are those of news_site.news.selectors (`entry_list`, `entry_popular`, `_public`):
the same visibility (relevant entries only) and the same order, which ends on the id so that
it is total. tests/news/news/test_entry_rows.py requires the same rows from both, page by page and
cursor by cursor, on generated entries. Names come from the models' metadata and are quoted;
values are always parameters.
"""

import functools
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal, TypedDict, cast

from django.db import connection

from news_site.news.models import Entry, Feed, Tag
from shared.sql import column, dates_loaded_natively, table

EntryOrder = Literal["latest", "popular"]

# Each list's order, here and in the ORM's lists (selectors.entry_list, entry_popular order by
# these). Every row holds these fields, so a page's last row gives a cursor's position.
ORDERS: dict[str, tuple[str, ...]] = {
    "latest": ("-listed_at", "-id"),
    "popular": ("-view_count", "-listed_at", "-id"),
}


class EntryRow(TypedDict):
    """An entry as the /api/v1 lists show it, read as a plain row."""

    id: int
    url: str
    image_url: str
    language: str
    title: str
    summary_original: str
    summary_translated: str
    # When it was published or, for older records without that time, when we first listed it.
    published: datetime
    # When we first listed it: the newest-first lists' order.
    listed_at: datetime
    platform_relevant: bool
    view_count: int
    source_count: int
    feed_id: int
    feed_title: str


class TagRef(TypedDict):
    id: int
    name: str


@dataclass(frozen=True)
class EntryListing:
    """Relevant entries in `order`, of the sources `feed_ids` (None: of every source; empty:
    of none) and labelled `tag_id` (None: any)."""

    order: EntryOrder = "latest"
    feed_ids: tuple[int, ...] | None = None
    tag_id: int | None = None

    @property
    def order_by(self) -> tuple[str, ...]:
        return ORDERS[self.order]

    def rows(self, *, after: list[Any] | None, offset: int, limit: int) -> list[EntryRow]:
        """Up to `limit` rows from `offset`, or strictly after the order keys `after` (a
        cursor's position: one value per name of `order_by`)."""
        if self.feed_ids == ():
            return []
        feeds = len(self.feed_ids) if self.feed_ids is not None else 0
        statement = _statement(self.order, feeds, self.tag_id is not None, after is not None)
        params: list[Any] = []
        if self.tag_id is not None:
            params.append(self.tag_id)
        params.extend(self.feed_ids or ())
        if after is not None:
            params.extend(_parameter(value) for value in after)
        params.extend((limit, offset))
        with connection.cursor() as cursor:
            dates_loaded_natively(cursor)
            cursor.execute(statement, params)
            names = [description[0] for description in cursor.description]
            return [_entry_row(dict(zip(names, values, strict=True))) for values in cursor]


def _parameter(value: Any) -> Any:
    # A cursor's dates are aware; SQLite compares the text Django stores (UTC, naive).
    if isinstance(value, datetime):
        return connection.ops.adapt_datetimefield_value(value)
    return value


def _entry_row(row: dict[str, Any]) -> EntryRow:
    row["listed_at"] = listed = _aware(row["listed_at"])
    published = row.pop("published_at")
    row["published"] = _aware(published) if published is not None else listed
    return cast(EntryRow, row)


def _aware(moment: datetime) -> datetime:
    """PostgreSQL's dates come aware; SQLite's as the naive UTC Django stored."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


@functools.cache
def _statement(order: EntryOrder, feeds: int, tagged: bool, keyed: bool) -> str:
    """The statement of a list's page: `feeds` sources in the filter (0: every source),
    `tagged` by one tag, `keyed`: after a cursor's position. Parameters in this order: the
    tag, the sources, the position's keys, the limit, the offset."""
    e = {name: f"e.{column(Entry, name)}" for name in _ENTRY_COLUMNS}
    keys = [e[name.lstrip("-")] for name in ORDERS[order]]
    selected = ", ".join(
        [
            *(f"{e[name]} AS {connection.ops.quote_name(name)}" for name in _ENTRY_COLUMNS),
            f"f.{column(Feed, 'title')} AS {connection.ops.quote_name('feed_title')}",
        ]
    )
    joins = [f"JOIN {table(Feed)} f ON f.{column(Feed, 'pk')} = {e['feed_id']}"]
    if tagged:
        links = Entry.tags.through
        joins.append(
            f"JOIN {table(links)} l ON l.{column(links, 'entry')} = {e['id']} "
            f"AND l.{column(links, 'tag')} = %s"
        )
    conditions = [e["platform_relevant"]]
    if feeds:
        conditions.append(f"{e['feed_id']} IN ({', '.join(['%s'] * feeds)})")
    if keyed:
        # Every key of these orders is descending and never NULL: "after" is "less than", as a
        # row value (the same rows as news_site.api.cursors.after's expansion, which PostgreSQL
        # reads from the lists' indexes as one range).
        conditions.append(f"({', '.join(keys)}) < ({', '.join(['%s'] * len(keys))})")
    return (
        f"SELECT {selected} FROM {table(Entry)} e {' '.join(joins)} "  # noqa: S608
        f"WHERE {' AND '.join(conditions)} "
        f"ORDER BY {', '.join(f'{key} DESC' for key in keys)} LIMIT %s OFFSET %s"
    )


_ENTRY_COLUMNS = (
    "id",
    "url",
    "image_url",
    "language",
    "title",
    "summary_original",
    "summary_translated",
    "platform_relevant",
    "view_count",
    "source_count",
    "feed_id",
    "published_at",
    "listed_at",
)


def entry_tag_refs(*, entry_ids: list[int]) -> dict[int, list[TagRef]]:
    """The tags of each of these entries (an entry without tags is missing), in one query and
    in the order every surface shows them (selectors._with_relations: the lower-cased name,
    then id)."""
    if not entry_ids:
        return {}
    tags: dict[int, list[TagRef]] = {}
    with connection.cursor() as cursor:
        cursor.execute(_tag_refs_sql(len(entry_ids)), entry_ids)
        for entry_id, tag_id, name in cursor.fetchall():
            tags.setdefault(entry_id, []).append({"id": tag_id, "name": name})
    return tags


@functools.cache
def _tag_refs_sql(count: int) -> str:
    """entry_tag_refs's statement for `count` entries."""
    links = Entry.tags.through
    entry, tag = column(links, "entry"), column(links, "tag")
    tag_id, tag_name = column(Tag, "pk"), column(Tag, "name")
    placeholders = ", ".join(["%s"] * count)
    return (
        f"SELECT l.{entry}, t.{tag_id}, t.{tag_name} "  # noqa: S608
        f"FROM {table(links)} l JOIN {table(Tag)} t ON t.{tag_id} = l.{tag} "
        f"WHERE l.{entry} IN ({placeholders}) ORDER BY LOWER(t.{tag_name}), t.{tag_id}"
    )
