"""An entry's JSON is what the fields EntrySerializer declares (the schema) make of it.

EntrySerializer builds its output by hand (news_site.api.serializers.entry_representation),
from a list's plain rows or from a model: here DRF's own field machinery renders the same
entries through the declared fields, and both must give the same bytes, on every list and for
every kind of entry (no publication time, no image, a URL stored before ingest cleaned it, an
English source, tags whose names sort differently by case).
"""

from datetime import timedelta
from types import SimpleNamespace

import pytest
from django.utils import timezone
from rest_framework import serializers
from rest_framework.renderers import JSONRenderer

from news_site.api.serializers import EntrySerializer, shown_url
from news_site.news.cleaning import clean_url
from news_site.news.models import Entry
from news_site.news.selectors import entry_get

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]


def _declared(entry: Entry, lang: str) -> bytes:
    """`entry` rendered by DRF through EntrySerializer's declared fields, as the schema says:
    the publication time or, without one, the listing time; the summary in `lang` (the
    Swedish one, or the source's own when it is English, else empty)."""
    if lang == "sv":
        summary = entry.summary_translated
    else:
        summary = entry.summary_original if entry.language.startswith("en") else ""
    source = SimpleNamespace(
        id=entry.pk,
        url=entry.url,
        image_url=entry.image_url,
        published_at=entry.published_at or entry.listed_at,
        source_count=entry.source_count,
        view_count=entry.view_count,
        platform_relevant=entry.platform_relevant,
        feed=entry.feed,
        content={
            "original": {
                "language": entry.language,
                "title": entry.title,
                "summary": entry.summary_original,
            },
            "translated": {"language": lang, "summary": summary},
        },
        tags=sorted(entry.tags.all(), key=lambda tag: (tag.name.lower(), tag.pk)),
    )
    shape = EntrySerializer(context={"lang": lang})
    return JSONRenderer().render(serializers.Serializer.to_representation(shape, source))


@pytest.fixture
def entries(make_feed, make_entry, make_tag) -> list[Entry]:
    feed = make_feed(title="Källa ä")
    other = make_feed(title="Other source")
    tags = [make_tag("beta"), make_tag("Alfa"), make_tag("Ämne")]
    now = timezone.now()
    made = [
        make_entry(
            feed,
            published_at=now - timedelta(minutes=1),
            image_url="https://img.example/a.jpg",
            tags=tags,
            source_count=3,
            view_count=7,
        ),
        make_entry(
            other,
            language="en",
            summary_original="An English summary.",
            summary_translated="En svensk sammanfattning.",
            published_at=now - timedelta(minutes=2),
            tags=[tags[0]],
        ),
        # Stored before ingest cleaned URLs: shown as clean_url makes them.
        make_entry(
            feed,
            url="HTTPS://Exempel.se/nyheter/åäö artikel?q=<x>",
            image_url="javascript:alert(1)",
            published_at=now - timedelta(minutes=3),
        ),
        make_entry(feed, url="https://exempel.se:8443/a|b", image_url="", view_count=12),
    ]
    # Older records have no publication time: the listing time stands in.
    Entry.objects.filter(pk=made[3].pk).update(
        published_at=None, listed_at=now - timedelta(hours=1)
    )
    return [Entry.objects.get(pk=entry.pk) for entry in made]


@pytest.mark.parametrize("lang", ["sv", "en"])
def test_a_lists_entries_are_what_the_declared_fields_make_of_them(http, entries, lang):
    feed_id = entries[0].feed_id
    lists = {
        "/api/v1/entries": entries,
        "/api/v1/entries/popular": entries,
        f"/api/v1/feeds/{feed_id}/entries": [e for e in entries if e.feed_id == feed_id],
    }
    for path, listed in lists.items():
        response = http.get(f"{path}?per_page=50&lang={lang}")

        assert response.status_code == 200
        items = response.json()["data"]
        expected = {entry.pk: entry for entry in listed}
        assert sorted(item["id"] for item in items) == sorted(expected)
        for item in items:
            assert JSONRenderer().render(item) == _declared(expected[item["id"]], lang)


@pytest.mark.parametrize("lang", ["sv", "en"])
def test_a_models_entry_is_what_the_declared_fields_make_of_it(entries, lang):
    for entry in entries:
        found = entry_get(entry_id=entry.pk)

        data = EntrySerializer(found, context={"lang": lang}).data

        assert JSONRenderer().render(data) == _declared(entry, lang)


@pytest.mark.parametrize(
    "url",
    [
        "https://exempel.se/nyheter/artikel-1",
        "http://a.example/path?x=1&y=2#frag",
        "https://a.example",
        "https://a.example/%C3%A5?q=a+b;c=d,(e)*!~'@:$",
        "https://a.example/å",
        "https://a.example/a b",
        "HTTPS://a.example/",
        "https://a.example:99999/",
        "https://a.example:8080/",
        "https://user@a.example/",
        "https://[::1]/",
        "https://a.example/{x}|^`\\",
        "javascript:alert(1)",
        "ftp://a.example/",
        "https:///path",
        " https://a.example/ ",
        "https://a.example/\u202eevil",
        "//a.example/",
        "",
        "https://a.example/" + "a" * 2000,
    ],
)
def test_a_url_is_shown_as_clean_url_makes_it(url):
    assert shown_url(url) == clean_url(url)
