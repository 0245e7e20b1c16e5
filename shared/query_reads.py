"""Which query parameters a response depends on, as the view read them.

A cache keyed on the raw query string turns every unknown parameter into a miss: a burst of
clients adding a parameter of their own (`?_=1732612345`, as XHR libraries and crawlers do)
made every request a render, and most of the burst was refused with 503. What a response
depends on is what the view read, so that is what the key should hold.

`QueryReadsMiddleware`, outermost in Django, hands the view a `request.GET` that notes each
parameter looked up by name (`get`, `getlist`, `[]`, `in`); anything that reads the query as a
whole (iterating it, `items()`, `urlencode()`, `request.META["QUERY_STRING"]`, the full path)
notes "all of it". When the request asks for it (`X-Report-Query-Reads`, which the response
cache in front sends), the response says what was read in `X-Query-Reads`: the names, comma
separated, or `*`. The cache (news_site/responsecache.py) removes the header and keys the
response on those parameters' values alone.

Sound by construction for a view whose output depends only on what it reads: a request that
agrees on the values of the parameters a render read makes the view read the same ones and
answer the same.
"""

from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponseBase, QueryDict

REQUEST_HEADER = "HTTP_X_REPORT_QUERY_READS"
RESPONSE_HEADER = "X-Query-Reads"
ALL = "*"
# Methods that read the query as a whole.
_WHOLE = frozenset(
    {
        "items",
        "keys",
        "values",
        "lists",
        "dict",
        "urlencode",
        "copy",
        "__copy__",
        "__deepcopy__",
        "__reduce__",
        "__getstate__",
        "appendlist",
        "setlist",
        "setlistdefault",
        "setdefault",
        "pop",
        "popitem",
        "update",
    }
)


class ReadRecordingQueryDict(QueryDict):
    def __init__(self, source: QueryDict, reads: set[str]) -> None:
        super().__init__(mutable=True, encoding=source.encoding)
        for key, values in source.lists():
            super().setlist(key, values)
        self._mutable = False
        self._reads = reads

    def __getattribute__(self, name: str) -> Any:
        if name in _WHOLE:
            object.__getattribute__(self, "_reads").add(ALL)
        return super().__getattribute__(name)

    def __getitem__(self, key: str) -> Any:
        self._reads.add(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        self._reads.add(str(key))
        return super().__contains__(key)

    def get(self, key: str, default: Any = None) -> Any:
        self._reads.add(key)
        return super().get(key, default)

    def getlist(self, key: str, default: Any = None) -> Any:
        self._reads.add(key)
        return super().getlist(key, default)

    def __iter__(self) -> Any:
        self._reads.add(ALL)
        return super().__iter__()

    def __len__(self) -> int:
        self._reads.add(ALL)
        return super().__len__()


class _RecordingMeta(dict[str, Any]):
    """request.META, noting a read of the raw query string (the full path reads it)."""

    def __init__(self, source: dict[str, Any], reads: set[str]) -> None:
        super().__init__(source)
        self.reads = reads

    def __getitem__(self, key: str) -> Any:
        if key == "QUERY_STRING":
            self.reads.add(ALL)
        return super().__getitem__(key)

    def get(self, key: str, default: Any = None) -> Any:
        if key == "QUERY_STRING":
            self.reads.add(ALL)
        return super().get(key, default)


class QueryReadsMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        if request.method not in ("GET", "HEAD") or REQUEST_HEADER not in request.META:
            return self.get_response(request)
        reads: set[str] = set()
        # Django types request.GET as immutable, which this copy is too (`_mutable` is False).
        request.GET = ReadRecordingQueryDict(request.GET, reads)  # type: ignore[assignment]
        request.META = _RecordingMeta(request.META, reads)
        response = self.get_response(request)
        response[RESPONSE_HEADER] = ALL if ALL in reads else ",".join(sorted(reads))
        return response
