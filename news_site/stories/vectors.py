"""Lexical term vectors: TF-IDF over an entry's title and summaries, cosine similarity.

Sources write Swedish and English, so there is no language-specific stemmer: words are cut to
their first few letters, which folds most inflections of both languages ("uppdateringen",
"uppdateras"; "shipping", "shipped") at the cost of a few collisions that entity overlap and the
thresholds absorb. Numbers ("26.2", "500") are kept whole: they identify events well.
"""

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping

_TOKEN = re.compile(r"\d+(?:[.,]\d+)*|[^\W\d_]+")
_PREFIX_LENGTH = 6
# Title words say what the article is about more reliably than teaser words.
_TITLE_WEIGHT = 2
# A stored centroid keeps its strongest terms only, so story rows stay small.
CENTROID_MAX_TERMS = 300

_STOPWORD_TEXT = """
    a about after again all also an and are as at be been before but by can could do does for
    from had has have how in into is it its it's more new not now of on one or our out over
    says said so than that the their them then there these they this to up was we were what
    when which while who will with would you your apple apple's report reports according
    här är en ett och att det som den för med har på av till om inte kan nu nya ny nytt sin
    sina sitt så ska var vid eller efter från under över enligt också men då de dem du vi
    man mer när hur vad än in ut upp igen första andra
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def tokens(text: str) -> list[str]:
    """Lower-cased words cut to their stem-ish prefix, stopwords dropped."""
    out = []
    for token in _TOKEN.findall(text.lower()):
        if token in STOPWORDS or (len(token) < 2 and not token.isdigit()):
            continue
        out.append(token if token[0].isdigit() else token[:_PREFIX_LENGTH])
    return out


def term_vector(*, title: str, texts: Iterable[str]) -> dict[str, float]:
    """Log-scaled term frequencies of one article, unit length (before IDF)."""
    counts: Counter[str] = Counter()
    for token in tokens(title):
        counts[token] += _TITLE_WEIGHT
    for text in texts:
        counts.update(tokens(text))
    weights = {term: 1.0 + math.log(count) for term, count in counts.items()}
    return _unit(weights)


def centroid_add(centroid: Mapping[str, float], vector: Mapping[str, float]) -> dict[str, float]:
    """The sum of member vectors, trimmed to its strongest terms."""
    total = Counter(centroid)
    total.update(vector)
    return {term: round(weight, 4) for term, weight in total.most_common(CENTROID_MAX_TERMS)}


class Idf:
    """Inverse document frequencies over a recent sample of entries (smoothed, so terms never
    seen score as rare, which is what they are)."""

    def __init__(self, *, document_frequencies: Mapping[str, int], documents: int) -> None:
        self._df = document_frequencies
        self._n = documents
        # A story's centroid is weighted again each time a member joins: each term's logarithm
        # is taken once per run.
        self._weights: dict[str, float] = {}

    @classmethod
    def from_vectors(cls, vectors: Iterable[Mapping[str, float]]) -> "Idf":
        df: Counter[str] = Counter()
        n = 0
        for vector in vectors:
            df.update(vector.keys())
            n += 1
        return cls(document_frequencies=df, documents=n)

    def weight(self, term: str) -> float:
        weight = self._weights.get(term)
        if weight is None:
            weight = math.log((1 + self._n) / (1 + self._df.get(term, 0))) + 1.0
            self._weights[term] = weight
        return weight

    def apply(self, vector: Mapping[str, float]) -> dict[str, float]:
        weight = self.weight
        return _unit({term: value * weight(term) for term, value in vector.items()})


def cosine(a: Mapping[str, float], b: Mapping[str, float]) -> float:
    """Cosine of two unit vectors."""
    if len(a) > len(b):
        a, b = b, a
    return sum(value * b.get(term, 0.0) for term, value in a.items())


def _unit(weights: Mapping[str, float]) -> dict[str, float]:
    norm = math.sqrt(sum(value * value for value in weights.values()))
    return {term: value / norm for term, value in weights.items()} if norm else {}
