"""Structured logs: one JSON object per line, carrying the id of the request being served.

Every record of a process (Django, gunicorn, uvicorn, our own loggers) goes through
`JsonFormatter`, the production default; `LOG_FORMAT=text` (the quick start's .env) writes the
same records as short lines for a person at a terminal (`TextFormatter`). `LOG_LEVEL` is the
level of the one handler, so it holds for every logger, including those that set their own
level (django-tasks' worker sets INFO on its loggers).

A request's id comes from its `X-Request-ID` header when that is well formed (nginx sets it to
its own `$request_id`), else a new one is made; it is echoed in the response and stamped on
every line logged while the request is served, so one id finds the access line, the warnings
and the traceback of one request across nginx and the application.
"""

import json
import logging
import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

REQUEST_ID_HEADER = "X-Request-ID"
# Generous enough for nginx's 32 hex digits, UUIDs and most tracing ids; anything else (or
# anything longer) is replaced rather than written into the logs as the client sent it.
_REQUEST_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$")


@dataclass
class RequestContext:
    """The request being served. Whoever receives the request first makes it (the ASGI front of
    the news service, else the Django middleware); inner layers fill in `route`."""

    request_id: str
    route: str | None = None


_current: ContextVar[RequestContext | None] = ContextVar("request_context", default=None)


def request_id_from(header_value: str | None) -> str:
    if header_value and _REQUEST_ID.match(header_value):
        return header_value
    return uuid.uuid4().hex


def current_request() -> RequestContext | None:
    return _current.get()


@contextmanager
def serving(context: RequestContext) -> Iterator[RequestContext]:
    """Make `context` the current request for the code run inside (threads and tasks it starts
    through asgiref inherit it)."""
    token = _current.set(context)
    try:
        yield context
    finally:
        _current.reset(token)


# Attributes every LogRecord has; whatever else a record carries came from `extra=`, except
# uvicorn's copy of its message with terminal colours.
_RECORD_ATTRIBUTES = frozenset(
    vars(logging.LogRecord("", 0, "", 0, "", None, None)).keys()
    | {"message", "asctime", "color_message"}
)


class JsonFormatter(logging.Formatter):
    """time, level, logger, message, service, pid, request_id (inside a request), the record's
    `extra=` fields, and the traceback as `exception`."""

    def __init__(self, service: str = "", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.service = service

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC)
            .isoformat(timespec="milliseconds")
            .replace("+00:00", "Z"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if self.service:
            entry["service"] = self.service
        entry["pid"] = record.process
        extra = {
            key: value
            for key, value in vars(record).items()
            if key not in _RECORD_ATTRIBUTES and not key.startswith("_")
        }
        # Django logs a response's 4xx/5xx after the middleware is done with the request, with
        # the request attached; the middleware left the id on it.
        request = extra.pop("request", None)
        context = _current.get()
        request_id = context.request_id if context else getattr(request, "request_id", None)
        if request_id:
            entry["request_id"] = request_id
        entry.update(extra)
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


class TextFormatter(JsonFormatter):
    """`12:04:05 WARNING news_site.search: message (request_id=...)` and the traceback below:
    the JSON entry's fields, read by a person."""

    _HEAD = frozenset({"time", "level", "logger", "message", "service", "pid", "exception"})

    def format(self, record: logging.LogRecord) -> str:
        entry = json.loads(super().format(record))
        time = datetime.fromtimestamp(record.created, UTC).strftime("%H:%M:%S")
        fields = " ".join(
            f"{key}={value}" for key, value in entry.items() if key not in self._HEAD | {"stack"}
        )
        line = f"{time} {entry['level']:<7} {entry['logger']}: {entry['message']}"
        if fields:
            line += f" ({fields})"
        for key in ("exception", "stack"):
            if key in entry:
                line += "\n" + entry[key]
        return line


class RefusedHostFilter(logging.Filter):
    """A request for a host not in ALLOWED_HOSTS is a client's mistake or a scanner's probe,
    answered 400; Django logs each at ERROR with a traceback, which buried real errors (and
    paged) on every scan. It stays one WARNING line naming the host, without the traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.levelno, record.levelname = logging.WARNING, "WARNING"
        record.exc_info, record.exc_text = None, None
        return True


LOG_FORMATS = ("json", "text")


def logging_config(*, service: str, level: str, log_format: str = "json") -> dict[str, Any]:
    """The LOGGING of both projects: everything to stderr through the root logger, as JSON
    lines or (log_format "text") as readable lines, at `level` whatever a logger asks for."""
    if log_format not in LOG_FORMATS:
        raise ValueError(f"LOG_FORMAT must be one of {', '.join(LOG_FORMATS)}, not {log_format!r}")
    formatter = "shared.logs.TextFormatter" if log_format == "text" else "shared.logs.JsonFormatter"
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"records": {"()": formatter, "service": service}},
        "filters": {"refused_host": {"()": "shared.logs.RefusedHostFilter"}},
        "handlers": {
            "console": {"class": "logging.StreamHandler", "formatter": "records", "level": level}
        },
        "root": {"handlers": ["console"], "level": level},
        "loggers": {
            # httpx logs every URL it requests at INFO, query strings included.
            "httpx": {"level": "WARNING"},
            # The MCP SDK logs "Terminating session: None" at INFO for every stateless call.
            "mcp.server.streamable_http_manager": {"level": "WARNING"},
            # Django's own handlers write plain text (console under DEBUG, mail to ADMINS);
            # its records go to the root's JSON handler instead.
            "django": {"handlers": [], "level": "INFO", "propagate": True},
            "django.security.DisallowedHost": {"filters": ["refused_host"]},
        },
    }
