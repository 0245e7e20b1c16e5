"""Keyword search on PostgreSQL: the query's own syntax (websearch: quoted phrases, `or`, a
word excluded with `-`) holds when the page is filled with entries that have only some of the
words, and no query text makes it fail. Runs on PostgreSQL only (unmarked: docs/testing.md)."""

import pytest
from django.db import connection
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from news_site.search.selectors import COMMON_WORD_ENTRIES, entries_keyword_search
from tests.support.news_factories import EntryFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def corpus(make_feed, make_entry):
    feed = make_feed()

    def entry(title: str, summary: str):
        return make_entry(feed, title=title, summary_original=summary, summary_translated=summary)

    return {
        "both": entry("AirPods mäter puls", "Hörlurarna mäter puls under promenader."),
        "pulse": entry("Klockan mäter puls", "Pulsmätning på handleden."),
        "excluded": entry("AirPods för träning", "Hörlurar som sitter kvar under träning."),
        "neither": entry("Ny iPad presenterad", "En surfplatta med större skärm."),
    }


def test_a_word_excluded_with_a_minus_stays_excluded_when_the_page_is_filled(corpus):
    found = entries_keyword_search(query="AirPods puls -träning", limit=10)

    # Reading the exclusion as one more alternative matched every entry without the word.
    assert [entry.pk for entry in found] == [corpus["both"].pk, corpus["pulse"].pk]


def test_a_quoted_phrase_is_one_alternative(corpus):
    found = entries_keyword_search(query='"mäter puls" surfplatta', limit=10)

    assert {entry.pk for entry in found} == {
        corpus["both"].pk,
        corpus["pulse"].pk,
        corpus["neither"].pk,
    }


def test_a_page_full_of_entries_with_every_word_is_not_filled_further(corpus):
    found = entries_keyword_search(query="AirPods puls", limit=1)

    assert [entry.pk for entry in found] == [corpus["both"].pk]


# The characters websearch and tsquery syntax give meaning to, words of the corpus and others.
QUERY_TEXT = st.lists(
    st.one_of(
        st.sampled_from(
            [
                "AirPods",
                "puls",
                "träning",
                "iPad",
                "och",
                "i",
                "or",
                "OR",
                "-",
                '"',
                "'",
                "(",
                ")",
                "&",
                "|",
                "!",
                ":*",
                "<->",
                "<2>",
                "\\",
                "\u200b",
                "\x00",
                " ",
                "--",
                '-"a b"',
            ]
        ),
        st.text(max_size=8),
    ),
    max_size=12,
).map(" ".join)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(query=QUERY_TEXT, limit=st.integers(min_value=1, max_value=10))
def test_any_query_text_finds_entries_or_nothing_without_failing(corpus, query, limit):
    found = entries_keyword_search(query=query.replace("\x00", ""), limit=limit)

    ids = [entry.pk for entry in found]
    assert len(ids) == len(set(ids)) <= limit
    assert set(ids) <= {entry.pk for entry in corpus.values()}


def test_a_word_very_many_entries_hold_does_not_fill_the_page(make_feed, make_entry):
    feed = make_feed()
    EntryFactory.create_batch(COMMON_WORD_ENTRIES + 100, feed=feed, summary_original="Apple.")
    wanted = make_entry(feed, title="Apple AirPods mäter puls", summary_original="Hörlurar.")
    pulse = make_entry(feed, title="Klockan mäter puls", summary_original="Handleden.")
    # The statistics the search reads, of this test's entries (rolled back with them).
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE news_entry")

    found = entries_keyword_search(query="Apple AirPods puls", limit=10)

    # Every entry has "Apple": the page is filled with the entries that have the other words.
    assert [entry.pk for entry in found] == [wanted.pk, pulse.pk]
