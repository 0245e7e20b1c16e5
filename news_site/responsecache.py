"""A per-process cache of public responses, in front of Django (ASGI).

The public read surfaces (legacy JSON, markdown, RSS) are the same for every caller and say so
with `Cache-Control: public, max-age=N`. Serving a repeat of one from memory skips Django's
request cycle entirely, which is most of what a request costs. Only such responses are kept:
status 200, `public` with a positive `max-age`, no `Set-Cookie`, no `private`/`no-store`, at
most `MAX_BODY` bytes. A request with a cookie, an `Authorization` header or a conditional
header always goes to Django. Entries live `NEWS_RESPONSE_CACHE_SECONDS` (default 10).

The key is everything the response depends on: scheme, `Host` (with its port: pages carry
absolute links), path, the query parameters the view read and the request headers the response
`Vary`s on, each as
Django reads it (several lines of one header joined with commas, as Django joins them) and
normalised (case and spaces), so that `Accept: text/html` and `Accept: text/markdown` sent as
two lines are one key, never the key of either line alone.

Memory is bounded: entries are kept in least-recently-used order and the oldest go once the
bodies and headers kept exceed `NEWS_RESPONSE_CACHE_MAX_BYTES` (default 16 MiB per process), so
a crawl of distinct query strings costs a fixed amount of memory. What each path varies on is
remembered in the same bounded way.

Query parameters count by what the view read (shared/query_reads.py): each render reports the
parameters it looked up, and its copy is keyed on their values alone (a view that read the
query as a whole is keyed on the raw query string). A parameter no view reads, such as the
unique one an XHR library or a crawler adds to every request, is ignored for the key, so it
cannot turn a kept page into a render; a parameter given twice is keyed on every value, in
order, as Django hands them to the view. Until a page's first render has said what it reads,
its requests are keyed on what its surface declares it reads (news_site/cache_keys.py, the
list nginx keys on too), or on the raw query string for a path no surface declares.

One request at a time refreshes an expired entry; meanwhile the others get the expired copy,
which is still within the `max-age` the application gave it. A page with no copy yet (a
worker's first requests, an evicted entry) is rendered by one request while the others for it
wait and then get its copy: sixteen clients arriving at a fresh worker at once rendered an RSS
page of 100,000 entries sixteen times, which emptied the connection pool and refused some of
them with 503. Responses that turn out not to be kept (private, not 200, too large) are
remembered, boundedly, so that later requests for them render at once instead of queueing
behind each other.

Why keep it next to nginx's cache (docs/operators-capacity.md has the figures): straight on
gunicorn it serves a public page some 80 times faster than Django renders it, it spares Django
the refresh storms when nginx's entries expire on several nginx workers or hosts at once, and
deployments without nginx's cache (a second host, a platform's own proxy) keep the same cost.

A hit says how old it is (`Age`) and lowers `max-age` by that much, so a cache in front (nginx)
never keeps a page longer than the application allowed in the first place.
"""

import asyncio
import contextlib
import json
import re
import time
from collections import OrderedDict
from dataclasses import dataclass

from django.core.exceptions import TooManyFieldsSent
from django.http import QueryDict
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from news_site.cache_keys import plain, surface_reads
from shared.query_reads import ALL, RESPONSE_HEADER

MAX_ENTRIES = 2000
MAX_BODY = 1 << 20
DEFAULT_MAX_BYTES = 16 << 20
# A request whose path and query are longer is served without the cache: no page a reader
# asks for has such a key, and a crawler's 64 KB query strings would otherwise be kept as keys.
MAX_KEY_BYTES = 4096
# What one entry or index row costs besides its bytes (the objects, the dict slot).
_ENTRY_OVERHEAD = 400
_INDEX_OVERHEAD = 100
# How long requests for a page with no copy wait for the one rendering it, before rendering it
# themselves: a render that hangs must not hold every other client of that page.
FIRST_RENDER_WAIT_SECONDS = 5.0
_MAX_AGE = re.compile(rb"max-age=(\d+)")
_BYPASS = {b"cookie", b"authorization", b"if-none-match", b"if-modified-since"}
_REPORT_READS = b"x-report-query-reads"
_READS = RESPONSE_HEADER.lower().encode()
_NOT_FOR_PROXY_CACHES = (b"x-accel-expires", b"0")


@dataclass
class _Entry:
    status: int
    headers: list[tuple[bytes, bytes]]
    body: bytes
    stored_at: float
    max_age: int
    size: int


class PublicResponseCache:
    def __init__(self, app: ASGIApp, *, seconds: int, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.app = app
        self.seconds = seconds
        self.max_bytes = max_bytes
        self.entries: OrderedDict[tuple, _Entry] = OrderedDict()
        # Bytes of the kept responses (bodies, headers and keys) and of the two indexes below
        # (their keys); together never over max_bytes.
        self.size_bytes = 0
        self.index_bytes = 0
        # The request headers each (scheme, host, path, query) varies on, learnt from its
        # responses; least recently used first, as bounded as the entries.
        self.vary: OrderedDict[tuple, tuple[bytes, ...]] = OrderedDict()
        self.refreshing: set[tuple] = set()
        # Keys being rendered with no copy to serve meanwhile: their renders' "done" events.
        self.first_renders: dict[tuple, asyncio.Event] = {}
        # Keys whose last response was not kept; least recently used first, as bounded.
        self.not_kept: OrderedDict[tuple, None] = OrderedDict()
        # The query parameters each (scheme, host, path) read in its last render (ALL: the raw
        # query string); least recently used first, as bounded.
        self.query_reads: OrderedDict[tuple, tuple[str, ...]] = OrderedDict()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self._cacheable_request(scope):
            # Only this cache asks a view what it read.
            if any(name == _REPORT_READS for name, _value in scope.get("headers", ())):
                scope = {**scope, "headers": _without(scope["headers"], _REPORT_READS)}
            await self.app(scope, receive, send)
            return
        headers = _request_headers(scope)
        page = (scope.get("scheme", "http"), headers.get(b"host", b"").lower(), scope["path"])
        # The path as sent, as nginx matches it (scope["path"] is decoded).
        declared = surface_reads(scope.get("raw_path", scope["path"].encode()).decode("latin-1"))
        if page in self.query_reads:
            self.query_reads.move_to_end(page)
        base = (*page, _query_key(scope["query_string"], self._reads(page, declared)))
        scope = {
            **scope,
            "headers": [*_without(scope["headers"], _REPORT_READS), (_REPORT_READS, b"1")],
        }
        send = self._kept_out_of_proxy_caches(page, declared, scope["query_string"], send)
        key, served = await self._serve_copy(base, headers, send)
        if served:
            return
        rendering = self.first_renders.get(key)
        if rendering is not None and key not in self.not_kept:
            # Past the wait it is rendered here, as if the other render were not there.
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(rendering.wait(), FIRST_RENDER_WAIT_SECONDS)
            # Looked up again: the render may have taught what the path varies on and which
            # query parameters its view reads.
            base = (*page, _query_key(scope["query_string"], self._reads(page, declared)))
            key, served = await self._serve_copy(base, headers, send)
            if served:
                return
        await self._render(key, base, headers, scope, receive, send)

    async def _serve_copy(self, base: tuple, headers: dict, send: Send) -> tuple[tuple, bool]:
        """The request's key, and whether a kept copy answered it."""
        key = _key(base, self.vary.get(base, ()), headers)
        entry = self.entries.get(key)
        if entry is None:
            return key, False
        now = time.monotonic()
        age = now - entry.stored_at
        # While one request refreshes an expired page, the others get the copy they had, still
        # within the application's max-age, instead of all rendering it at once.
        if age < self.seconds or (key in self.refreshing and age < entry.max_age):
            self.entries.move_to_end(key)
            await _replay(entry, now, send)
            return key, True
        return key, False

    async def _render(
        self, key: tuple, base: tuple, headers: dict, scope: Scope, receive: Receive, send: Send
    ) -> None:
        first = key not in self.first_renders and key not in self.entries
        if first:
            self.first_renders[key] = asyncio.Event()
        kept: list[bool] = []
        self.refreshing.add(key)
        try:
            recorder = self._recorder(base, scope["query_string"], headers, send, kept)
            await self.app(scope, receive, recorder)
        finally:
            self.refreshing.discard(key)
            if first:
                self.first_renders.pop(key).set()
            if not kept and key not in self.not_kept:
                self.not_kept[key] = None
                self.index_bytes += _index_size(key)
                self._trim()
            elif not kept:
                self.not_kept.move_to_end(key)

    def _reads(self, page: tuple, declared: tuple[str, ...] | None) -> tuple[str, ...] | None:
        """What the page's view reads: as its last render said, else as its surface declares
        (None: not known)."""
        return self.query_reads.get(page, declared)

    def _cacheable_request(self, scope: Scope) -> bool:
        return (
            self.seconds > 0
            and scope["type"] == "http"
            and scope["method"] == "GET"
            and len(scope["path"]) + len(scope["query_string"]) <= MAX_KEY_BYTES
            and not any(name in _BYPASS for name, _value in scope["headers"])
        )

    def _recorder(
        self, base: tuple, query: bytes, request_headers: dict, send: Send, kept: list[bool]
    ) -> Send:
        """`send`, keeping the response when it may be kept (and then appending to `kept`)."""
        start: Message = {}
        chunks: list[bytes] = []
        size = 0

        async def record(message: Message) -> None:
            nonlocal start, size, base
            if message["type"] == "http.response.start":
                reported = [v for n, v in message.get("headers", []) if n.lower() == _READS]
                if reported:
                    message = {**message, "headers": _without(message["headers"], _READS)}
                    base = self._learn_reads(base, query, reported[0])
                start = message
            elif message["type"] == "http.response.body" and size <= MAX_BODY:
                # A body past MAX_BODY is never kept, so its chunks are not held either.
                chunks.append(message.get("body", b""))
                size += len(chunks[-1])
                complete = size <= MAX_BODY and not message.get("more_body", False)
                if complete and self._store(base, request_headers, start, b"".join(chunks)):
                    kept.append(True)
            await send(message)

        return record

    def _kept_out_of_proxy_caches(
        self, page: tuple, declared: tuple[str, ...] | None, query: bytes, send: Send
    ) -> Send:
        """`send`, telling nginx not to keep an answer (`X-Accel-Expires: 0`; nginx does not
        pass the header on) that it would keep under a key other requests share wrongly, or
        once per cache-busting parameter.

        nginx keys a query its surface declares plain on the declared parameters' values
        (news_site/cache_keys.py): such an answer may be kept when the view read nothing else,
        so every request under that key gets the view's own answer even if a view and its
        declaration part (tests compare them). Any other query nginx keys on the whole URI: an
        answer asked with a parameter its view does not read is not kept there, since a
        cache-busting burst would write one more copy of the same page to nginx's disk per
        request and push real pages out; this cache answers those from its own copy. Checked at
        the answer: a first render has learnt the reads by then."""
        normalised = declared is not None and plain(declared, query.decode("latin-1"))

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                reads = self._reads(page, declared)
                if normalised:
                    refused = not _read_within(reads, declared)
                else:
                    refused = _unread_parameter(query, reads)
                if refused:
                    message = {**message, "headers": [*message["headers"], _NOT_FOR_PROXY_CACHES]}
            await send(message)

        return sending

    def _learn_reads(self, base: tuple, query: bytes, reported: bytes) -> tuple:
        """Remember what the page's view read; the base its response is kept under."""
        page = base[:3]
        text = reported.decode("latin-1")
        reads = (ALL,) if text == ALL else tuple(name for name in text.split(",") if name)
        if page not in self.query_reads:
            self.index_bytes += _index_size(page)
        self.query_reads[page] = reads
        self.query_reads.move_to_end(page)
        return (*page, _query_key(query, reads))

    def _store(self, base: tuple, request_headers: dict, start: Message, body: bytes) -> bool:
        """Keep the response if it may be kept; whether it was."""
        headers = start.get("headers", [])
        max_age = _storable_max_age(start.get("status", 0), headers, len(body))
        if max_age is None:
            return False
        vary = tuple(
            sorted(
                name.strip().lower().encode()
                for value in (v for n, v in headers if n.lower() == b"vary")
                for name in value.decode("latin-1").split(",")
                if name.strip()
            )
        )
        if b"*" in vary:
            return False
        key = _key(base, vary, request_headers)
        size = (
            len(body) + sum(len(n) + len(v) for n, v in headers) + _key_size(key) + _ENTRY_OVERHEAD
        )
        if size + _index_size(base) > self.max_bytes:
            return False
        if base not in self.vary:
            self.index_bytes += _index_size(base)
        self.vary[base] = vary
        self.vary.move_to_end(base)
        if key in self.not_kept:
            del self.not_kept[key]
            self.index_bytes -= _index_size(key)
        old = self.entries.pop(key, None)
        if old is not None:
            self.size_bytes -= old.size
        self.entries[key] = _Entry(
            start["status"], list(headers), body, time.monotonic(), max_age, size
        )
        self.size_bytes += size
        self._trim()
        return True

    def _trim(self) -> None:
        """Evict, oldest first, until the kept bytes fit the budget: the record of responses
        not kept first, then what paths vary on (forgetting it costs one render, which learns it
        again), then the kept responses."""
        while self.not_kept and (self._over_budget() or len(self.not_kept) > MAX_ENTRIES):
            evicted_key, _none = self.not_kept.popitem(last=False)
            self.index_bytes -= _index_size(evicted_key)
        while self.vary and (self._over_budget() or len(self.vary) > MAX_ENTRIES):
            evicted_base, _vary = self.vary.popitem(last=False)
            self.index_bytes -= _index_size(evicted_base)
        while self.query_reads and (self._over_budget() or len(self.query_reads) > MAX_ENTRIES):
            evicted_page, _reads = self.query_reads.popitem(last=False)
            self.index_bytes -= _index_size(evicted_page)
        while self.entries and (self._over_budget() or len(self.entries) > MAX_ENTRIES):
            _evicted_key, evicted = self.entries.popitem(last=False)
            self.size_bytes -= evicted.size

    def _over_budget(self) -> bool:
        return self.size_bytes + self.index_bytes > self.max_bytes


def _request_headers(scope: Scope) -> dict[bytes, bytes]:
    """The request's headers as Django reads them: several lines of one name joined by commas
    (ASGI gives each line; a dict of them would keep only the last)."""
    joined: dict[bytes, bytes] = {}
    for name, value in scope["headers"]:
        name = name.lower()
        joined[name] = joined[name] + b"," + value if name in joined else value
    return joined


def _without(headers: list[tuple[bytes, bytes]], name: bytes) -> list[tuple[bytes, bytes]]:
    return [(n, v) for n, v in headers if n.lower() != name]


def _read_within(reads: tuple[str, ...] | None, declared: tuple[str, ...] | None) -> bool:
    """Whether the view read only parameters its surface declares."""
    return (
        reads is not None
        and declared is not None
        and ALL not in reads
        and set(reads) <= set(declared)
    )


def _unread_parameter(query: bytes, reads: tuple[str, ...] | None) -> bool:
    """Whether the query names a parameter the view is known not to read."""
    if not query or reads is None or ALL in reads:
        return False
    try:
        return any(name not in reads for name in QueryDict(query))
    except TooManyFieldsSent:
        return False


def _query_key(query: bytes, reads: tuple[str, ...] | None) -> bytes:
    """The query string's part of a key: the values of the parameters `reads` names, as Django
    parses them for the view, or the raw string when what the view reads is not known. Each
    form is tagged, so that no raw string can be taken for a normalised one."""
    if reads is None or ALL in reads:
        return b"r" + query
    try:
        parsed = QueryDict(query)
    except TooManyFieldsSent:  # Django refuses the request; its answer is not kept
        return b"r" + query
    values = [[name, parsed.getlist(name)] for name in reads]
    return b"n" + json.dumps(values, ensure_ascii=False).encode()


def _key_size(key: tuple) -> int:
    return sum(len(part) for part in key)


def _index_size(key: tuple) -> int:
    return _key_size(key) + _INDEX_OVERHEAD


def _key(base: tuple, vary: tuple[bytes, ...], headers: dict[bytes, bytes]) -> tuple:
    # Case and spacing do not change what a header asks for (`text/html, text/markdown` and
    # `text/html,text/markdown` negotiate the same representation).
    return (*base, *(b"".join(headers.get(name, b"").lower().split()) for name in vary))


def _storable_max_age(status: int, headers: list[tuple[bytes, bytes]], size: int) -> int | None:
    if status != 200 or size > MAX_BODY:
        return None
    control = b",".join(v for n, v in headers if n.lower() == b"cache-control").lower()
    if any(n.lower() == b"set-cookie" for n, _v in headers):
        return None
    if b"public" not in control or b"private" in control or b"no-store" in control:
        return None
    match = _MAX_AGE.search(control)
    max_age = int(match[1]) if match else 0
    return max_age if max_age > 0 else None


async def _replay(entry: _Entry, now: float, send: Send) -> None:
    age = int(now - entry.stored_at)
    headers = []
    for name, value in entry.headers:
        lowered = name.lower()
        if lowered == b"cache-control":
            value = _MAX_AGE.sub(b"max-age=%d" % max(0, entry.max_age - age), value)
        elif lowered == b"age":
            continue
        headers.append((name, value))
    headers.append((b"age", str(age).encode()))
    await send({"type": "http.response.start", "status": entry.status, "headers": headers})
    await send({"type": "http.response.body", "body": entry.body})
