"""The one exception a guarded fetch (shared/fetch.py) raises, with a machine-readable code."""

from typing import Literal

FetchErrorCode = Literal[
    "blocked_address",
    "timeout",
    "too_large",
    "tls_error",
    "connection_error",
    "too_many_redirects",
    "invalid_url",
]


class FetchError(Exception):
    """A fetch that produced no response. `message` names the host at most, never the URL,
    because URLs can carry credentials (userinfo, tokens in the query)."""

    def __init__(self, code: FetchErrorCode, message: str) -> None:
        super().__init__(message)
        self.code: FetchErrorCode = code
        self.message = message

    def __repr__(self) -> str:
        return f"FetchError({self.code!r}, {self.message!r})"
