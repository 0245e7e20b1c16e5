"""Which query parameters each public surface reads: the one list both caches key on.

A cache keyed on the raw query string makes every unknown parameter a miss: a burst of clients
adding one of their own (`?_=1732612345`, as XHR libraries and crawlers do) reached the
application with every request. Unknown parameters are ignored for the key, never refused:
those libraries add them to every request, and a 400 would break their clients for nothing.

`SURFACES` names each anonymous, cacheable surface by its path (a regular expression over the
path as sent, before any percent-decoding) and the parameters its view reads (`ALL`: the query
as a whole). From it:
- nginx's cache key (`nginx_maps`, pasted into deploy/nginx/news.conf between the marker
  lines; tests/shared/test_nginx_cache_keys.py fails when the two differ, and checks that
  real nginx keys every query as `plain` says): the values of the parameters the surface
  reads, for a query nginx can read as Django does (`plain`); any other request is keyed on
  its URI as sent.
- the response cache (news_site/responsecache.py): its key before a page's first render has
  said what it read, and whether nginx may keep an answer.
Every surface's view is checked against its entry by tests/news/serving/test_cache_keys.py,
through the reads the view reports (shared/query_reads.py).

When nginx and Django read a query differently (nginx's `$arg_page` takes the first `page=`
and matches the name in any case, undecoded; Django takes the last, case-sensitively, after
decoding), a key of nginx's could hold another request's page. So a query is keyed on the
parameters' values only when it is `plain`: printable ASCII, at most `PLAIN_MAX` characters
(well under Django's 1,000-field limit, past which it refuses the request), each parameter the
surface reads at most once, as `name=value` with a value (`page=` and a bare `page` are
refused by the view, and nginx cannot tell them from no `page` at all), and no other name that
nginx could take for one of them (another case, `%`-escapes, `+`). Anything else, such as
`?page=2&page=1` or `?PAGE=2`, is keyed on the raw query: only the same request gets the copy.
The regular expressions are written in the subset PCRE (nginx) and Python's `re` read alike,
so the response cache decides as nginx does.
"""

import functools
import re
from dataclasses import dataclass

from shared.query_reads import ALL

PLAIN_MAX = 512
# A query's characters (RFC 3986); a name nginx cannot take for another has no `%` or `+`.
_NAME_CHARS = "-A-Za-z0-9._~!$'()*,;:@/?"
_QUERY_CHARS = _NAME_CHARS + "&=%+"
_NAME = re.compile("[a-z_]+")

# Path parts, as the URL converters (news_site/news/converters.py) accept them, unescaped; no
# capturing groups (surface_reads counts on that).
_ID = "[0-9]{1,20}"
_ID_SLUG = "[0-9]{1,20}(?:-[-a-zA-Z0-9_]{0,300})?"
_TAG_SLUG = "[-a-zA-Z0-9_]{1,60}"
_GUIDE_SLUG = "[a-z0-9]+(?:-[a-z0-9]+)*"
_EPISODE_ID = "[-a-zA-Z0-9_.~]{1,200}"

# Every /api/v1 operation reads these: DRF's `format` and the refusal of a `token` in the query.
_API = ("format", "token")
_PAGE = ("cursor", "page", "per_page")


@dataclass(frozen=True)
class Surface:
    # A regular expression over the whole path as sent (anchored when used).
    path: str
    # The query parameters the view reads, sorted; (ALL,) when it reads the whole query.
    reads: tuple[str, ...]
    # A path of this surface, with {entry}, {feed}, {tag}, {tag_slug}, {story}, {episode} or
    # {guide} for an id of the data: what the test of the view's reads asks.
    example: str


def _surface(path: str, example: str, *reads: str) -> Surface:
    return Surface(path, tuple(sorted(reads)), example)


# First match wins, in this order (a guide's `/<slug>` last, as in the URLconf).
SURFACES: tuple[Surface, ...] = (
    # Legacy JSON (news_site/legacy).
    _surface(r"/entries\.json", "/entries.json", "items"),
    _surface(r"/entries/popular\.json", "/entries/popular.json", "items"),
    _surface(rf"/entries/{_ID}\.json", "/entries/{entry}.json"),
    _surface(r"/feeds\.json", "/feeds.json"),
    _surface(rf"/feeds/{_ID}\.json", "/feeds/{feed}.json", "items"),
    _surface(r"/tags\.json", "/tags.json"),
    _surface(rf"/tags/{_ID}\.json", "/tags/{tag}.json", "items"),
    # Agents' surfaces (news_site/agents).
    _surface(r"/entries\.rss", "/entries.rss"),
    _surface(r"/index\.md", "/index.md"),
    _surface(r"/llms\.txt", "/llms.txt"),
    _surface(rf"/entries/{_ID}\.md", "/entries/{entry}.md"),
    _surface(rf"/{_GUIDE_SLUG}\.md", "/{guide}.md"),
    # /api/v1 (news_site/api): anonymous reads; with a token they pass both caches.
    _surface("/api/v1/", "/api/v1/", *_API),
    _surface("/api/v1/entries", "/api/v1/entries", *_API, *_PAGE, "lang", "sort"),
    _surface("/api/v1/entries/popular", "/api/v1/entries/popular", *_API, *_PAGE, "lang"),
    _surface("/api/v1/feeds", "/api/v1/feeds", *_API, *_PAGE),
    _surface(f"/api/v1/feeds/{_ID}", "/api/v1/feeds/{feed}", *_API),
    _surface(f"/api/v1/feeds/{_ID}/entries", "/api/v1/feeds/{feed}/entries", *_API, *_PAGE, "lang"),
    _surface("/api/v1/tags", "/api/v1/tags", *_API, *_PAGE),
    _surface(f"/api/v1/tags/{_TAG_SLUG}", "/api/v1/tags/{tag_slug}", *_API),
    _surface(
        f"/api/v1/tags/{_TAG_SLUG}/entries",
        "/api/v1/tags/{tag_slug}/entries",
        *_API,
        *_PAGE,
        "lang",
    ),
    # Its filter (django-filter) reads the query as a whole.
    _surface("/api/v1/stories", "/api/v1/stories", ALL),
    _surface(f"/api/v1/stories/{_ID_SLUG}", "/api/v1/stories/{story}", *_API, "lang"),
    _surface("/api/v1/podd_episodes", "/api/v1/podd_episodes", *_API, *_PAGE),
    _surface(
        f"/api/v1/podd_episodes/{_EPISODE_ID}",
        "/api/v1/podd_episodes/{episode}",
        *_API,
        "include_transcript",
    ),
    # Pages for people (news_site/pages); `/` and `/entries/N` also answer markdown by Accept,
    # which both caches key on as the response says (Vary).
    _surface("/", "/", "sida"),
    _surface(f"/entries/{_ID}", "/entries/{entry}"),
    _surface(f"/handelser/{_ID_SLUG}", "/handelser/{story}"),
    _surface("/sok", "/sok", "q"),
    _surface("/guider", "/guider"),
    _surface("/podd", "/podd"),
    _surface(f"/podd/{_EPISODE_ID}", "/podd/{episode}"),
    _surface("/taggar", "/taggar"),
    _surface(f"/taggar/{_TAG_SLUG}", "/taggar/{tag_slug}", "sida"),
    _surface("/kallor", "/kallor"),
    _surface(f"/kallor/{_ID}", "/kallor/{feed}", "sida"),
    _surface(f"/{_GUIDE_SLUG}", "/{guide}"),
)

# One alternative per surface, each its own group: the first that matches is the surface.
_PATHS = re.compile("|".join(f"(^{surface.path}$)" for surface in SURFACES))


def surface_reads(path: str) -> tuple[str, ...] | None:
    """What the surface of `path` (as sent, not decoded) reads; None for a path no surface has."""
    match = _PATHS.match(path)
    if match is None or match.lastindex is None:
        return None
    return SURFACES[match.lastindex - 1].reads


@functools.cache
def plain_pattern(reads: tuple[str, ...]) -> str:
    """The regular expression of the queries keyed on the values of `reads` alone."""
    if not reads:
        return f"^[{_QUERY_CHARS}]{{0,{PLAIN_MAX}}}$"
    assert all(_NAME.fullmatch(name) for name in reads), reads
    known = "|".join(reads)
    item = f"(?:{known})=[^&]+|(?!(?i:{known})(?:[=&]|$))[{_NAME_CHARS}]*(?:=[^&]*)?"
    return (
        f"^(?=[{_QUERY_CHARS}]{{0,{PLAIN_MAX}}}$)"
        # No name the surface reads given twice.
        f"(?!(?:.*&)?({known})=.*&\\1=)"
        f"(?:{item})(?:&(?:{item}))*$"
    )


@functools.cache
def _plain(reads: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(plain_pattern(reads))


def plain(reads: tuple[str, ...], query: str) -> bool:
    """Whether nginx keys `query` on the values of `reads` (it does as this says)."""
    return ALL not in reads and _plain(reads).match(query) is not None


def nginx_maps() -> str:
    """nginx's half: the maps that give `$news_cache_key`, its cache key. `n` and the path with
    the values of the parameters read, or `r` and the URI as sent; on the host and port asked
    for (`$news_path` and `$news_forwarded_host` are the site's own maps)."""
    origin = "$scheme$news_forwarded_host"
    lines = [
        "# The query parameters each surface reads (news_site/cache_keys.py).",
        "map $news_path $news_query_reads {",
        '    default "*";',
    ]
    lines += [f'    "~^{s.path}$" "{",".join(s.reads)}";' for s in SURFACES if ALL not in s.reads]
    lines += [
        "}",
        "",
        "# The cache key: the values of the parameters the surface reads when nginx reads the",
        "# query as Django does, the URI as sent otherwise.",
        'map "$news_query_reads|$args" $news_cache_key {',
        f'    default "r{origin}$request_uri";',
    ]
    for reads in sorted({s.reads for s in SURFACES if ALL not in s.reads}):
        values = "&".join(f"{name}=$arg_{name}" for name in reads)
        pattern = plain_pattern(reads).removeprefix("^")
        lines.append(f'    "~^{",".join(reads)}\\|{pattern}" "n{origin}$news_path?{values}";')
    lines.append("}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(nginx_maps(), end="")
