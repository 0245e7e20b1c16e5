"""Path converters for the service's URLs: the one place that says what an id in a path is.

An id is 1-20 digits naming a value a database integer key can hold; anything else does not
match, so each surface answers its own 404 (the API's envelope, the HTML page elsewhere)."""

# Values a database integer primary key can hold; larger ids name nothing.
MAX_ID = 2**63 - 1


class IdConverter:
    regex = "[0-9]{1,20}"

    def to_python(self, value: str) -> int:
        number = int(value)
        if not 0 < number <= MAX_ID:
            # A ValueError makes Django treat the path as not matching this pattern.
            raise ValueError(f"id out of range: {value}")
        return number

    def to_url(self, value: int) -> str:
        return str(value)


class IdSlugConverter(IdConverter):
    """`<id>` or `<id>-<slug>` (a readable URL); the slug is ignored, the id is returned."""

    regex = "[0-9]{1,20}(?:-[-a-zA-Z0-9_]{0,300})?"

    def to_python(self, value: str) -> int:
        return super().to_python(value.split("-", 1)[0])


class TagSlugConverter:
    """A tag's slug: letters, digits, `-` and `_`, at most 60 (the column's length)."""

    regex = "[-a-zA-Z0-9_]{1,60}"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


class GuideSlugConverter(TagSlugConverter):
    """A guide's slug: lower-case letters and digits in hyphen-separated words, so no path can
    escape the guide table."""

    regex = "[a-z0-9]+(?:-[a-z0-9]+)*"


class EpisodeIdConverter(TagSlugConverter):
    """An episode's id, or its feed GUID in an old link (answered with a redirect): any text
    but NUL, at most 200 characters (the GUID column's length)."""

    regex = "[^\\x00]{1,200}"


class AnyPathConverter(TagSlugConverter):
    """Any path, line breaks included (Django's `path` converter is `.+`, which stops at one):
    the catch-all that answers a surface's own 404."""

    regex = "(?s:.+)"
