"""Models that try to dodge the verbatim guard (issue 21), and the canary tests' own measure
of what a reader sees: runs of 8 or more words of the article on a surface.

The measure is written here, apart from news_site.news.guard, so that a gap in the guard's
normalisation is not repeated in the test: the look-alikes are the ones these models use.
"""

import html
import json
import re
import unicodedata
import xml.etree.ElementTree as ET
from collections.abc import Callable

import httpx

from tests.news.conftest import FakeModel

TITLE = "Apple visar ny telefon"
TEASER = "Ny telefon från Apple."
ARTICLE = (
    "Apple presenterade på tisdagen en ny generation av sin populära telefon med en större "
    "skärm, en snabbare processor och en kamera som enligt bolaget tar betydligt skarpare "
    "bilder i svagt ljus. Telefonen ska finnas i butikerna om två veckor och priset blir "
    "detsamma som för förra årets modell, uppger bolaget. Analytiker som tidningen har talat "
    "med räknar med att försäljningen ökar något under årets sista kvartal, men varnar för att "
    "konkurrensen från andra tillverkare har hårdnat under året."
)
RUN = 8
HARMLESS = "Apple har visat en ny telefon som kommer snart."

_INVISIBLE = {"\u00ad", "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"}
# Latin letters and the Cyrillic look-alikes the confusables model writes in their place.
_LOOK_ALIKES = {
    "a": "\u0430",
    "e": "\u0435",
    "o": "\u043e",
    "p": "\u0440",
    "c": "\u0441",
    "x": "\u0445",
}
_CYRILLIC = str.maketrans(_LOOK_ALIKES)
_FROM_CYRILLIC = str.maketrans({cyrillic: latin for latin, cyrillic in _LOOK_ALIKES.items()})


def _words() -> list[str]:
    return ARTICLE.split()


def _inside_every_sixth(mark: str) -> str:
    return " ".join(
        w[: len(w) // 2] + mark + w[len(w) // 2 :] if i % 6 == 5 and len(w) > 1 else w
        for i, w in enumerate(_words())
    )


def _with_filler_every(n: int, words: list[str]) -> str:
    return " ".join(f"{w} sägs" if i % n == n - 1 else w for i, w in enumerate(words))


def _chained_tags() -> list[str]:
    words = _words()
    return [" ".join(words[i : i + 3]) for i in range(0, 12, 3)]


# Each model answers every article with one evasion of the guard.
EVASIONS: dict[str, Callable[[], dict]] = {
    "soft-hyphens": lambda: {"summary_sv": _inside_every_sixth("\u00ad")},
    "zero-width-spaces": lambda: {"summary_sv": _inside_every_sixth("\u200b")},
    "confusables": lambda: {"summary_sv": ARTICLE.translate(_CYRILLIC)},
    "eleven-word-runs": lambda: {"summary_sv": _with_filler_every(11, _words())},
    # Each field under the length cap and without a long run; together, the article.
    "split-fields": lambda: {
        "summary_sv": " ".join(_words()[:7]),
        "summary_original": " ".join(_words()[7:14]),
    },
    "split-halves": lambda: {
        "summary_sv": _with_filler_every(11, _words()[:40]),
        "summary_original": _with_filler_every(11, _words()[40:]),
    },
    "chained-tags": lambda: {"summary_sv": HARMLESS, "tags": _chained_tags()},
    "sentence-tag": lambda: {"summary_sv": HARMLESS, "tags": [" ".join(_words()[:12])]},
}


def serve_evasive_model(server, evasion: str) -> None:
    answer = {"summary_original": "", "tags": ["iPhone"], "platform_relevant": True}
    answer.update(EVASIONS[evasion]())

    def route(request) -> None:
        body = json.dumps(FakeModel.completion(answer)).encode()
        request.send_response(200)
        request.send_header("Content-Type", "application/json")
        request.send_header("Content-Length", str(len(body)))
        request.end_headers()
        request.wfile.write(body)

    server.route("/v1/chat/completions", route)


def reader_words(text: str) -> list[str]:
    text = unicodedata.normalize("NFKC", html.unescape(text))
    text = "".join(c for c in text if c not in _INVISIBLE).translate(_FROM_CYRILLIC)
    return re.findall(r"\w+", text.casefold())


def _runs(words: list[str]) -> set[tuple[str, ...]]:
    return {tuple(words[i : i + RUN]) for i in range(len(words) - RUN + 1)}


ARTICLE_RUNS = _runs(reader_words(ARTICLE))


def copied_runs(text: str) -> set[tuple[str, ...]]:
    """The runs of RUN words of the article that a reader of `text` sees."""
    return ARTICLE_RUNS & _runs(reader_words(text))


def surface_text(response: httpx.Response) -> str:
    """What a reader of the response reads, in the order the surface shows it."""
    kind = response.headers.get("Content-Type", "")
    if "json" in kind:
        return " ".join(strings_in(response.json()))
    if "xml" in kind:
        root = ET.fromstring(response.content)  # noqa: S314 - our own answer
        return re.sub(r"<[^>]+>", " ", html.unescape(" ".join(root.itertext())))
    if "html" in kind:
        return re.sub(r"<[^>]+>", " ", response.text)
    return response.text


def strings_in(value: object) -> list[str]:
    """Every string in a JSON value, in document order."""
    if isinstance(value, dict):
        return [s for item in value.values() for s in strings_in(item)]
    if isinstance(value, list):
        return [s for item in value for s in strings_in(item)]
    return [value] if isinstance(value, str) else []
