"""The vendor's product vocabulary: offline tags and the offline vendor-relevance test."""

import re

RUMOR_TAG = "Rykten"
RUMOR_WORDS = ("rumor", "rumour", "rykte", "rykten", "ryktas", "reportedly", "uppges")
# Tag name -> words that mean it. Whole words, case-insensitive.
PRODUCT_TAGS: dict[str, tuple[str, ...]] = {
    "iPhone": ("iphone",),
    "iPad": ("ipad",),
    "Mac": ("mac", "macbook", "imac", "mac mini", "mac studio", "mac pro"),
    "Apple Watch": ("apple watch", "watchos"),
    "AirPods": ("airpods",),
    "Apple TV": ("apple tv", "tvos"),
    "HomePod": ("homepod",),
    "Vision Pro": ("vision pro", "visionos"),
    "iOS": ("ios",),
    "macOS": ("macos",),
    "Apple Intelligence": ("apple intelligence", "siri"),
    "App Store": ("app store",),
    "Apple Music": ("apple music",),
    RUMOR_TAG: RUMOR_WORDS,
}
# Any of these makes an entry vendor-relevant.
VENDOR_WORDS: tuple[str, ...] = (
    "apple",
    "cupertino",
    "tim cook",
    *(word for name, words in PRODUCT_TAGS.items() if name != RUMOR_TAG for word in words),
)


def _pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(word) for word in sorted(words, key=len, reverse=True))
    return re.compile(rf"(?<![\w-])(?:{alternatives})(?![\w-])", re.IGNORECASE)


_TAG_PATTERNS = {name: _pattern(words) for name, words in PRODUCT_TAGS.items()}
_VENDOR_PATTERN = _pattern(VENDOR_WORDS)


def tags_for(text: str) -> list[str]:
    return [name for name, pattern in _TAG_PATTERNS.items() if pattern.search(text)]


def is_vendor_relevant(text: str) -> bool:
    return _VENDOR_PATTERN.search(text) is not None
