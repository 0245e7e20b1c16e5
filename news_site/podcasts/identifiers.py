"""The episode's id in every path and link: readable, path-safe, fixed once stored.

A feed's GUID is any text (often a URL with `?`, `#` and `/`, sometimes long or non-ASCII), so it
cannot stand in a path segment. The id is the title's slug (ASCII, at most `SLUG_CHARS`) and a
hash of the GUID: two episodes with the same title still differ, and a title an editor
corrects later leaves the id alone because it is assigned when the episode is first stored
(docs/decisions.md)."""

import hashlib
import re

from django.utils.text import slugify

SLUG_CHARS = 60
HASH_CHARS = 12
# For a title with no letter or digit that survives the ASCII slug ("???", "…").
UNTITLED = "avsnitt"

# What the id always looks like: lower-case words joined by hyphens, the last one the hash.
EPISODE_ID_PATTERN = f"^[a-z0-9]+(?:-[a-z0-9]+)*-[0-9a-f]{{{HASH_CHARS}}}$"


def episode_id_for(*, guid: str, title: str) -> str:
    # slugify keeps `_` and can leave `-_-`: only letters and digits make a word here.
    slug = re.sub("[^a-z0-9]+", "-", slugify(title))[:SLUG_CHARS].strip("-")
    digest = hashlib.sha256(guid.encode("utf-8", "surrogatepass")).hexdigest()[:HASH_CHARS]
    return f"{slug or UNTITLED}-{digest}"
