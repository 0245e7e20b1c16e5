"""The verbatim guard: a model answer is published only if it does not copy the article.

Content rights: we publish summaries, never the article. The guard compares what a reader
sees, not the code points a model chose: a soft hyphen or zero-width space inside a word, a
Cyrillic letter a for a Latin one, full-width letters or a combining accent are invisible or alike
on the page, so both texts are brought to one reading form first (`reading_form`):

1. NFKC: compatibility forms (full-width, ligatures, mathematical letters) to plain letters;
2. format characters removed (Unicode category Cf: soft hyphen, zero-width space and joiners,
   word joiner, BOM, bidirectional controls);
3. look-alike letters folded (Cyrillic and Greek letters that render like Latin ones, from
   Unicode's confusables list: the common ones, `_CONFUSABLES`);
4. casefold, then accents removed (NFKD without combining marks), on both sides alike.

An answer is refused when, in that form, any field, or fields read one after another (the
surfaces show the Swedish summary, the original one and the tags together), shares a run of
VERBATIM_RUN_WORDS words with the article; or when the published text of both summaries
together is longer than PUBLISHED_TEXT_MAX_CHARS. Tags longer than TAG_MAX_WORDS words or
TAG_MAX_CHARS characters are not topic words: they are left out (`tags_allowed`).
"""

import itertools
import re
import unicodedata
from collections.abc import Iterable, Sequence

SUMMARY_MAX_CHARS = 600
# Both summaries together, as a page shows them.
PUBLISHED_TEXT_MAX_CHARS = 800
VERBATIM_RUN_WORDS = 8
TAG_MAX_WORDS = 3
TAG_MAX_CHARS = 40

_WORD = re.compile(r"\w+")
# Words of a field next to the tags that a run crossing the boundary can use.
_EDGE = VERBATIM_RUN_WORDS - 1

# Letters of other scripts that render like Latin ones in common fonts (the Cyrillic, Greek
# and Latin-extension entries of Unicode's confusables.txt that matter for Latin text), by
# their Unicode names. Upper and lower case are folded separately, before casefolding: the
# Greek capital nu looks like N, its small letter like v.
_LOOK_ALIKES = {
    "A": ("CYRILLIC CAPITAL LETTER A", "GREEK CAPITAL LETTER ALPHA"),
    "a": ("CYRILLIC SMALL LETTER A", "GREEK SMALL LETTER ALPHA", "LATIN SMALL LETTER ALPHA"),
    "B": ("CYRILLIC CAPITAL LETTER VE", "GREEK CAPITAL LETTER BETA"),
    "b": ("CYRILLIC SMALL LETTER SOFT SIGN",),
    "C": ("CYRILLIC CAPITAL LETTER ES", "GREEK CAPITAL LUNATE SIGMA SYMBOL"),
    "c": ("CYRILLIC SMALL LETTER ES", "GREEK LUNATE SIGMA SYMBOL"),
    "d": ("CYRILLIC SMALL LETTER KOMI DE",),
    "E": ("CYRILLIC CAPITAL LETTER IE", "GREEK CAPITAL LETTER EPSILON"),
    "e": ("CYRILLIC SMALL LETTER IE",),
    "g": ("LATIN SMALL LETTER SCRIPT G",),
    "H": ("CYRILLIC CAPITAL LETTER EN", "GREEK CAPITAL LETTER ETA"),
    "h": ("CYRILLIC SMALL LETTER SHHA",),
    "I": (
        "CYRILLIC CAPITAL LETTER BYELORUSSIAN-UKRAINIAN I",
        "CYRILLIC LETTER PALOCHKA",
        "GREEK CAPITAL LETTER IOTA",
    ),
    "i": (
        "CYRILLIC SMALL LETTER BYELORUSSIAN-UKRAINIAN I",
        "GREEK SMALL LETTER IOTA",
        "LATIN SMALL LETTER DOTLESS I",
    ),
    "J": ("CYRILLIC CAPITAL LETTER JE", "GREEK CAPITAL LETTER YOT"),
    "j": ("CYRILLIC SMALL LETTER JE", "GREEK LETTER YOT", "LATIN SMALL LETTER DOTLESS J"),
    "K": ("CYRILLIC CAPITAL LETTER KA", "GREEK CAPITAL LETTER KAPPA"),
    "k": ("CYRILLIC SMALL LETTER KA", "GREEK SMALL LETTER KAPPA"),
    "l": ("CYRILLIC SMALL LETTER PALOCHKA",),
    "M": ("CYRILLIC CAPITAL LETTER EM", "GREEK CAPITAL LETTER MU"),
    "m": ("CYRILLIC SMALL LETTER EM",),
    "N": ("GREEK CAPITAL LETTER NU",),
    "O": ("CYRILLIC CAPITAL LETTER O", "GREEK CAPITAL LETTER OMICRON"),
    "o": ("CYRILLIC SMALL LETTER O", "GREEK SMALL LETTER OMICRON"),
    "P": ("CYRILLIC CAPITAL LETTER ER", "GREEK CAPITAL LETTER RHO"),
    "p": ("CYRILLIC SMALL LETTER ER", "GREEK SMALL LETTER RHO"),
    "q": ("CYRILLIC SMALL LETTER QA",),
    "r": ("CYRILLIC SMALL LETTER GHE",),
    "S": ("CYRILLIC CAPITAL LETTER DZE",),
    "s": ("CYRILLIC SMALL LETTER DZE",),
    "T": ("CYRILLIC CAPITAL LETTER TE", "GREEK CAPITAL LETTER TAU"),
    "u": ("GREEK SMALL LETTER UPSILON",),
    "v": ("GREEK SMALL LETTER NU",),
    "w": ("CYRILLIC SMALL LETTER WE",),
    "X": ("CYRILLIC CAPITAL LETTER HA", "GREEK CAPITAL LETTER CHI"),
    "x": ("CYRILLIC SMALL LETTER HA", "GREEK SMALL LETTER CHI"),
    "Y": (
        "CYRILLIC CAPITAL LETTER U",
        "CYRILLIC CAPITAL LETTER STRAIGHT U",
        "GREEK CAPITAL LETTER UPSILON",
    ),
    "y": ("CYRILLIC SMALL LETTER U", "CYRILLIC SMALL LETTER STRAIGHT U"),
    "Z": ("GREEK CAPITAL LETTER ZETA",),
}
_CONFUSABLES = str.maketrans(
    {unicodedata.lookup(name): latin for latin, names in _LOOK_ALIKES.items() for name in names}
)


class VerbatimCopy(ValueError):
    """The answer shares a run of article words, or is longer than a summary may be."""


def reading_form(text: str) -> str:
    """`text` as a reader sees it, for comparison only (never stored or shown)."""
    composed = unicodedata.normalize("NFKC", text)
    visible = "".join(c for c in composed if unicodedata.category(c) != "Cf")
    folded = visible.translate(_CONFUSABLES).casefold()
    return "".join(c for c in unicodedata.normalize("NFKD", folded) if not unicodedata.combining(c))


def reading_words(text: str) -> list[str]:
    return _WORD.findall(reading_form(text))


def word_runs(words: Sequence[str], length: int = VERBATIM_RUN_WORDS) -> set[tuple[str, ...]]:
    return {tuple(words[i : i + length]) for i in range(len(words) - length + 1)}


def tags_allowed(tags: Iterable[str]) -> list[str]:
    """The tags that are topic words (a product, a subject), not sentences."""
    return [
        tag
        for tag in tags
        if len(tag) <= TAG_MAX_CHARS and len(reading_words(tag)) <= TAG_MAX_WORDS
    ]


def answer_guard(*, swedish: str, original: str, tags: Sequence[str], article: str) -> None:
    """Raise VerbatimCopy for an answer a reader would see as a copy of `article`."""
    for label, text in (("Swedish", swedish), ("original", original)):
        if len(text) > SUMMARY_MAX_CHARS:
            raise VerbatimCopy(
                f"the model's {label} summary is {len(text)} characters "
                f"(at most {SUMMARY_MAX_CHARS})"
            )
    if len(swedish) + len(original) > PUBLISHED_TEXT_MAX_CHARS:
        raise VerbatimCopy(
            f"the model's summaries are {len(swedish) + len(original)} characters together "
            f"(at most {PUBLISHED_TEXT_MAX_CHARS})"
        )
    article_runs = word_runs(reading_words(article))
    if not article_runs:
        return
    for label, words in _readings(swedish=swedish, original=original, tags=tags):
        if not article_runs.isdisjoint(word_runs(words)):
            raise VerbatimCopy(
                f"the model's {label} copies {VERBATIM_RUN_WORDS} or more consecutive words "
                "of the article"
            )


def _readings(
    *, swedish: str, original: str, tags: Sequence[str]
) -> Iterable[tuple[str, list[str]]]:
    """Every way a reader may meet the answer's words one after another: each summary, the
    two summaries in either order, and the tags in any order between the edges of the
    summaries (tags are a handful of short words, so their orders are few)."""
    sv, orig = reading_words(swedish), reading_words(original)
    yield "Swedish summary", sv
    yield "original summary", orig
    yield "summaries together", sv + orig
    yield "summaries together", orig + sv
    tag_words = [reading_words(tag) for tag in tags]
    if not any(tag_words):
        return
    # Shown after a summary, tags continue its last words; shown before, its first ones.
    tails = [[], sv[-_EDGE:], orig[-_EDGE:]]
    heads = [[], sv[:_EDGE], orig[:_EDGE]]
    for order in itertools.permutations(tag_words):
        chained = [word for tag in order for word in tag]
        for before, after in itertools.product(tails, heads):
            yield "tags", before + chained + after
