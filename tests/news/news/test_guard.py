"""The verbatim guard on its own (news_site/news/guard.py): what a reader sees is compared, and
ordinary summaries pass. The whole path, through ingest and every surface, is in
tests/news/test_canary_evasion.py."""

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from news_site.news.guard import (
    PUBLISHED_TEXT_MAX_CHARS,
    VerbatimCopy,
    answer_guard,
    reading_form,
    tags_allowed,
)
from tests.news.evasion import ARTICLE

WORDS = ARTICLE.split()
# Characters a reader does not see inside a word, and look-alikes a reader cannot tell apart.
INVISIBLE = ["\u00ad", "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u202e"]
LOOK_ALIKES = {"a": "\u0430", "e": "\u0435", "o": "\u03bf", "p": "\u0440", "i": "\u0456"}


def _guard(swedish: str, original: str = "", tags: list[str] | None = None) -> None:
    answer_guard(swedish=swedish, original=original, tags=tags or [], article=ARTICLE)


def test_an_ordinary_summary_with_short_shared_phrases_passes():
    _guard(
        "Apple har visat en ny generation av sin telefon med större skärm. Den säljs om två "
        "veckor till samma pris som förra året.",
        "Apple unveiled a new phone with a bigger screen.",
        ["iPhone", "Apple", "iPhone 17 Pro"],
    )


def test_seven_shared_words_pass_and_eight_are_refused():
    _guard("Enligt källan: " + " ".join(WORDS[:7]) + ", sägs det.")
    with pytest.raises(VerbatimCopy, match="8 or more"):
        _guard("Enligt källan: " + " ".join(WORDS[:8]) + ", sägs det.")


@settings(max_examples=60, deadline=None)
@given(
    start=st.integers(0, len(WORDS) - 8),
    marks=st.lists(st.tuples(st.integers(0, 7), st.sampled_from(INVISIBLE)), max_size=8),
    swaps=st.lists(st.sampled_from(sorted(LOOK_ALIKES)), max_size=5),
    upper=st.booleans(),
)
def test_any_eight_word_window_is_refused_however_it_is_disguised(start, marks, swaps, upper):
    words = WORDS[start : start + 8]
    for index, mark in marks:
        word = words[index]
        words[index] = word[: len(word) // 2] + mark + word[len(word) // 2 :]
    text = " ".join(words)
    for letter in swaps:
        text = text.replace(letter, LOOK_ALIKES[letter])
    with pytest.raises(VerbatimCopy):
        _guard(text.upper() if upper else text)


def test_full_width_letters_and_combining_accents_read_as_plain_ones():
    assert reading_form("\uff21\uff50\uff50\uff4c\uff45 pre\u0301senterade") == reading_form(
        "apple presenterade"
    )


def test_a_run_split_over_both_summaries_is_refused():
    with pytest.raises(VerbatimCopy, match="summaries together"):
        _guard(" ".join(WORDS[:5]), " ".join(WORDS[5:10]))


def test_tags_that_chain_into_a_run_are_refused_in_any_order():
    tags = [" ".join(WORDS[i : i + 3]) for i in range(0, 9, 3)]
    with pytest.raises(VerbatimCopy, match="tags"):
        _guard("En kort sammanfattning.", tags=list(reversed(tags)))


def test_a_run_continued_from_a_summary_into_the_tags_is_refused():
    with pytest.raises(VerbatimCopy, match="tags"):
        _guard("Nytt: " + " ".join(WORDS[:5]), tags=[" ".join(WORDS[5:8])])


def test_a_tag_longer_than_three_words_or_forty_characters_is_left_out():
    assert tags_allowed(["iPhone", "Apple Vision Pro", "en hel mening om saken", "x" * 41]) == [
        "iPhone",
        "Apple Vision Pro",
    ]


def test_both_summaries_together_are_capped():
    half = "Ord " * (PUBLISHED_TEXT_MAX_CHARS // 8)
    with pytest.raises(VerbatimCopy, match="together"):
        _guard(half + "a" * 10, half + "b" * 10)


def test_six_tags_are_checked_in_every_order_quickly():
    started = time.monotonic()
    _guard("En kort sammanfattning.", tags=["iPhone", "Mac", "iPad", "Apple", "iOS", "macOS"])
    # Every order of six tags one by one would take minutes; the slack is for a loaded machine.
    assert time.monotonic() - started < 10
