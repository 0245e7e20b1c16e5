"""The gunicorn worker class of the news service: uvicorn's worker with its HTTP protocol
bounded in time (shared/request_deadline.py), so that every byte of a request comes within
NEWS_REQUEST_BODY_SECONDS of the first one. gunicorn imports it before the application (and
Django's settings), so the setting is read from the environment as the settings read it."""

from typing import Any

# uvicorn-worker ships no type information.
from uvicorn_worker import UvicornWorker  # type: ignore[import-untyped]

from shared.env import env_int
from shared.request_body import DEFAULT_DEADLINE_SECONDS
from shared.request_deadline import deadline_protocol


class NewsWorker(UvicornWorker):
    CONFIG_KWARGS: dict[str, Any] = {
        "loop": "auto",
        "http": deadline_protocol(env_int("NEWS_REQUEST_BODY_SECONDS", DEFAULT_DEADLINE_SECONDS)),
    }
