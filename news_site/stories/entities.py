"""Named things an article is about: the vendor's products (with generation and model, such as
"iPhone 17 Pro", "M5 Ultra", "macOS 26.2"), its services and the few institutions that make
its news. Clustering requires a shared entity, which keeps two stories about different
products apart however similar their wording.

The vocabulary is the built-in list below plus the titles of the product guides editors keep in
the database, so a new product gets recognised once it has a guide.
"""

import functools
import re
from collections.abc import Iterable

from news_site.news.models import GuidePageType, ProductGuide

# Product lines; a model designation may follow ("iPhone" + "17 Pro Max").
PRODUCT_LINES = (
    "iPhone",
    "iPad",
    "MacBook",
    "iMac",
    "Mac",
    "Apple Watch",
    "AirPods",
    "Apple TV",
    "HomePod",
    "Vision Pro",
    "AirTag",
    "Apple Pencil",
    "iOS",
    "iPadOS",
    "macOS",
    "watchOS",
    "tvOS",
    "visionOS",
)
# Services, features and institutions: whole names, no model designation.
NAMES: dict[str, tuple[str, ...]] = {
    "app store": ("app store", "app stores", "app store-avgifterna", "app store-regler"),
    "apple pay": ("apple pay",),
    "apple music": ("apple music",),
    "apple intelligence": ("apple intelligence",),
    "siri": ("siri",),
    "facetime": ("facetime",),
    "face id": ("face id",),
    "dynamic island": ("dynamic island",),
    "eu": ("eu", "eu:s", "european union", "european commission", "eu-kommissionen"),
    "digital markets act": ("digital markets act", "dma"),
    "tsmc": ("tsmc",),
}
# Words that complete a model designation ("Pro", "Max", "Ultra 3", "Series 11", "26.2").
_DESIGNATION = r"(?:\d+(?:\.\d+)*|Pro|Max|Plus|Air|mini|Mini|Ultra|SE|Studio|Series|e)"
# macOS releases carry a name before the version ("macOS Tahoe 26.2"); the version identifies it.
_MACOS = r"macOS(?: (?-i:[A-Z][a-z]+)(?= \d))?"
_OS_RELEASE_NAME = re.compile(r"^(macos) [a-z]+ (\d)")
_CHIP = re.compile(r"(?<![\w-])([AM]\d{1,2})(?: (Pro|Max|Ultra|Bionic))?(?![\w-])")
_GENERIC_PREFIX = "apple "


def _alternation(words: Iterable[str]) -> str:
    return "|".join(re.escape(word) for word in sorted(set(words), key=len, reverse=True))


def product_lines() -> list[str]:
    """The built-in product lines plus the product guides' titles ("Apple Watch Ultra")."""
    titles = ProductGuide.objects.filter(
        page_type=GuidePageType.PRODUCT_HUB, is_published=True
    ).values_list("title", flat=True)
    return [*PRODUCT_LINES, *titles]


class EntityExtractor:
    """Built once per clustering run (it reads the guides), then used for every entry."""

    def __init__(self, *, lines: Iterable[str]) -> None:
        lines = [line for line in lines if line.lower() != "macos"]
        self._products = re.compile(
            rf"(?<![\w-])(?:{_MACOS}|{_alternation(lines)})(?: {_DESIGNATION})*(?![\w-])",
            re.IGNORECASE,
        )
        aliases = {alias: name for name, words in NAMES.items() for alias in words}
        self._aliases = aliases
        self._names = re.compile(rf"(?<![\w-])(?:{_alternation(aliases)})(?![\w-])", re.IGNORECASE)

    @classmethod
    def from_database(cls) -> "EntityExtractor":
        return cls(lines=product_lines())

    def extract(self, text: str) -> set[str]:
        """Normalised entity names ("iphone 17 pro", "m5 ultra", "macos 26.2", "eu")."""
        text = re.sub(r"\s+", " ", text)
        found: set[str] = set()
        for match in self._products.finditer(text):
            name = _OS_RELEASE_NAME.sub(r"\1 \2", match[0].lower())
            found.add(name.removeprefix(_GENERIC_PREFIX) if name != "apple tv" else name)
        for match in _CHIP.finditer(text):
            found.add(" ".join(part for part in match.groups() if part).lower())
        for match in self._names.finditer(text):
            found.add(self._aliases[match[0].lower()])
        return found


def is_specific(entity: str) -> bool:
    """A model or generation ("iphone 18 pro", "m5") rather than a whole line ("iphone")."""
    return any(ch.isdigit() for ch in entity) or " " in entity.removeprefix(_GENERIC_PREFIX)


# A product line alone ("iPhone") says less about the event than a model ("iPhone 18 Pro").
GENERIC_ENTITY_WEIGHT = 0.3


@functools.lru_cache(maxsize=65536)
def entity_weight(entity: str) -> float:
    """What sharing this entity says about two texts being about one event."""
    return 1.0 if is_specific(entity) else GENERIC_ENTITY_WEIGHT
