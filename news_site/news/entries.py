"""Entries: storing a feed document's items (in bulk, one by one when the database refuses the
batch), their tags, and counting views.

Entries are upserted by natural key: a GUID unique within the document, else the canonical
link. An entry first stored from one feed stays with that source.
"""

import logging
from collections import Counter
from collections.abc import Iterable
from datetime import date, datetime

from django.db import DatabaseError, IntegrityError, transaction
from django.db.models import F, Q
from django.utils.text import slugify

from news_site.news.cleaning import URL_MAX_LENGTH
from news_site.news.generation import content_changed
from news_site.news.models import Entry, EntryView, Feed, SummaryState, Tag
from news_site.news.parsing import ParsedItem
from news_site.news.summarise import summarise_offline
from news_site.news.text import canonical_url, fingerprint, sha256

logger = logging.getLogger(__name__)


def _usable_guids(items: list[ParsedItem]) -> Counter[str]:
    return Counter(item.guid for item in items if item.guid)


def entries_store(*, feed: Feed, items: list[ParsedItem], now: datetime) -> tuple[int, list[str]]:
    """Upsert a feed document's items; returns how many entries are new and a reason for
    each item that could not be stored (the others are stored all the same)."""
    guid_counts = _usable_guids(items)
    keyed: list[tuple[ParsedItem, str, str, str]] = []
    failed: list[str] = []
    for item in items:
        canonical = canonical_url(item.link)
        if len(item.link) > URL_MAX_LENGTH or len(canonical) > URL_MAX_LENGTH:
            failed.append(f"link longer than {URL_MAX_LENGTH} characters: {item.link[:80]}")
            continue
        # A GUID that is missing or repeated within the document identifies nothing, so the
        # canonical link stands in for it.
        guid = item.guid if guid_counts[item.guid] == 1 else f"url:{canonical}"
        keyed.append((item, guid, sha256(f"{feed.pk}\n{guid}"), sha256(canonical)))
    existing = Entry.objects.filter(
        Q(guid_hash__in=[k[2] for k in keyed]) | Q(canonical_url_hash__in=[k[3] for k in keyed])
    )
    by_hash: dict[str, Entry] = {}
    entry: Entry | None
    for entry in existing:
        by_hash[entry.guid_hash] = entry
        by_hash[entry.canonical_url_hash] = entry
    # The items new to the database (the first of any that share a key) are stored together;
    # the rest, and all of them if the database refuses that batch, one at a time below.
    fresh: list[tuple[ParsedItem, str, str, str]] = []
    one_by_one: list[tuple[ParsedItem, str, str, str]] = []
    taken: set[str] = set()
    for key in keyed:
        _, _, guid_hash, url_hash = key
        if {guid_hash, url_hash}.isdisjoint(by_hash.keys() | taken):
            fresh.append(key)
            taken |= {guid_hash, url_hash}
        else:
            one_by_one.append(key)
    stored = _entries_create(feed, fresh, now=now)
    if stored is None:
        one_by_one = keyed
        stored = []
    for entry in stored:
        by_hash[entry.guid_hash] = by_hash[entry.canonical_url_hash] = entry
    created = len(stored)
    for item, guid, guid_hash, url_hash in one_by_one:
        entry = by_hash.get(guid_hash) or by_hash.get(url_hash)
        # An entry first stored from another feed stays with that source.
        if entry is not None and entry.feed_id != feed.pk:
            continue
        # Most of a document's items are the entries it carried last time, unchanged: they
        # cost no statement (a savepoint each made a pass with 5 new items per feed slower
        # than the first pass).
        changed = _entry_changes(entry, item) if entry is not None else []
        if entry is not None and not changed:
            continue
        try:
            # A savepoint per written item: one the database refuses leaves the others stored.
            with transaction.atomic():
                if entry is None:
                    entry = _entry_create(
                        feed, item, guid=guid, guid_hash=guid_hash, url_hash=url_hash, now=now
                    )
                    if entry is not None:
                        created += 1
                        by_hash[guid_hash] = by_hash[url_hash] = entry
                else:
                    entry.save(update_fields=changed)
        except (DatabaseError, ValueError, OverflowError) as exc:
            logger.warning("feed %s: item %s not stored: %s", feed.pk, item.link[:200], exc)
            failed.append(f"{item.link[:80]}: {type(exc).__name__}: {str(exc)[:120]}")
    if keyed:
        content_changed()
    return created, failed


def _entries_create(
    feed: Feed, keyed: list[tuple[ParsedItem, str, str, str]], *, now: datetime
) -> list[Entry] | None:
    """A document's new items as entries, with their tags, in three statements rather than a
    handful per item (a first fetch of a feed stores all of its items). None when anything is
    refused: nothing is then stored, and the caller stores each item on its own."""
    if not keyed:
        return []
    try:
        with transaction.atomic():
            built = [
                _entry_build(feed, item, guid=guid, guid_hash=guid_hash, url_hash=url_hash, now=now)
                for item, guid, guid_hash, url_hash in keyed
            ]
            entries = Entry.objects.bulk_create([entry for entry, _ in built])
            tags = _tags_by_slug(names=[name for _, names in built for name in names])
            Entry.tags.through.objects.bulk_create(
                [
                    Entry.tags.through(entry_id=entry.pk, tag_id=tags[slug].pk)
                    for entry, names in built
                    for slug in dict.fromkeys(_tag_slug(name) for name in names)
                    if slug in tags
                ]
            )
    except (DatabaseError, ValueError, OverflowError) as exc:
        logger.info("feed %s: storing its new items together failed, one by one: %s", feed.pk, exc)
        return None
    return entries


def _entry_create(
    feed: Feed, item: ParsedItem, *, guid: str, guid_hash: str, url_hash: str, now: datetime
) -> Entry | None:
    entry, tag_names = _entry_build(
        feed, item, guid=guid, guid_hash=guid_hash, url_hash=url_hash, now=now
    )
    try:
        # A concurrent run may store the same article between our read and this insert.
        with transaction.atomic():
            entry.save()
    except IntegrityError:
        return None
    entry.tags.set(tags_named(names=tag_names))
    return entry


def _entry_build(
    feed: Feed, item: ParsedItem, *, guid: str, guid_hash: str, url_hash: str, now: datetime
) -> tuple[Entry, list[str]]:
    """An unsaved entry for a new item, with its offline summary, and its tags' names."""
    summary = summarise_offline(title=item.title, text=item.text, language=feed.language)
    published = item.published_at
    entry = Entry(
        feed=feed,
        guid=guid,
        guid_hash=guid_hash,
        url=item.link,
        canonical_url=canonical_url(item.link),
        canonical_url_hash=url_hash,
        title=item.title,
        author=item.author,
        image_url=item.image_url if len(item.image_url) <= URL_MAX_LENGTH else "",
        language=feed.language,
        published_at=published,
        created_at=now,
        listed_at=min(published, now) if published else now,
        content_fingerprint=fingerprint(title=item.title, text=item.text),
        summary_original=summary.original,
        summary_translated=summary.swedish,
        summary_state=SummaryState.EXTRACTED,
        platform_relevant=summary.platform_relevant,
    )
    return entry, list(summary.tags)


def _entry_changes(entry: Entry, item: ParsedItem) -> list[str]:
    """Bring `entry` in memory up to date with its item again; the fields that changed."""
    new_fingerprint = fingerprint(title=item.title, text=item.text)
    changed: list[str] = []
    if not entry.image_url and item.image_url and len(item.image_url) <= URL_MAX_LENGTH:
        entry.image_url = item.image_url
        changed.append("image_url")
    if new_fingerprint != entry.content_fingerprint:
        # The model step sees the new fingerprint and summarises again; an extract is redone
        # here because it costs nothing. Editors' summaries are theirs to update.
        entry.title = item.title
        entry.content_fingerprint = new_fingerprint
        changed += ["title", "content_fingerprint"]
        if entry.summary_state == SummaryState.EXTRACTED:
            summary = summarise_offline(title=item.title, text=item.text, language=entry.language)
            entry.summary_original = summary.original
            entry.summary_translated = summary.swedish
            changed += ["summary_original", "summary_translated"]
    return changed


def tags_named(*, names: Iterable[str]) -> list[Tag]:
    """The tags with these names, created when new; names that slugify alike are one tag."""
    return list(_tags_by_slug(names=names).values())


def _tag_slug(name: str) -> str:
    return slugify(name)[:60]


def _tags_by_slug(*, names: Iterable[str]) -> dict[str, Tag]:
    """The tags with these names by slug (read in one query), created when new."""
    wanted: dict[str, str] = {}
    for name in names:
        wanted.setdefault(_tag_slug(name), name)
    wanted.pop("", None)
    found = {tag.slug: tag for tag in Tag.objects.filter(slug__in=wanted)}
    tags: dict[str, Tag] = {}
    for slug, name in wanted.items():
        tag = found.get(slug)
        if tag is None:
            try:
                with transaction.atomic():
                    tag = Tag.objects.create(name=name[:60], slug=slug)
            except IntegrityError:
                tag = Tag.objects.filter(Q(slug=slug) | Q(name=name[:60])).first()
        if tag is not None:
            tags[slug] = tag
    return tags


def entry_view_record(*, entry_id: int, day: date) -> None:
    """Count one article view (behind popularity and the deprecated click_count)."""
    with transaction.atomic():
        view, _ = EntryView.objects.get_or_create(entry_id=entry_id, day=day)
        EntryView.objects.filter(pk=view.pk).update(count=F("count") + 1)
        Entry.objects.filter(pk=entry_id).update(view_count=F("view_count") + 1)
