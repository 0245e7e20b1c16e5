"""Recent tool answers, kept per process like the public responses of the HTTP surfaces
(`news_site/responsecache.py`): every tool is a public read, the same for every caller, so a
repeat of a call within NEWS_RESPONSE_CACHE_SECONDS gets the answer already made instead of
another database read and rendering (most of what a call costs besides the protocol itself).

Only successful answers are kept; a tool error is raised again on every call. The key is the
tool, its arguments and, for tools whose links need it, the public base URL.
"""

import functools
import inspect
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from typing import ParamSpec

from django.conf import settings
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult

MAX_ANSWERS = 1000

P = ParamSpec("P")


class AnswerCache:
    def __init__(self) -> None:
        self._answers: OrderedDict[Hashable, tuple[float, CallToolResult]] = OrderedDict()

    def clear(self) -> None:
        self._answers.clear()

    async def get_or_make(
        self, key: Hashable, make: Callable[[], Awaitable[CallToolResult]]
    ) -> CallToolResult:
        seconds = settings.NEWS_RESPONSE_CACHE_SECONDS
        now = time.monotonic()
        kept = self._answers.get(key)
        if kept is not None and now - kept[0] < seconds:
            return kept[1]
        answer = await make()
        if seconds > 0:
            self._answers[key] = (now, answer)
            self._answers.move_to_end(key)
            while len(self._answers) > MAX_ANSWERS:
                self._answers.popitem(last=False)
        return answer


ANSWERS = AnswerCache()


def kept_answer(
    base_url: Callable[[Context], str],
) -> Callable[[Callable[P, Awaitable[CallToolResult]]], Callable[P, Awaitable[CallToolResult]]]:
    """Serve a tool's repeated calls from ANSWERS. The wrapper keeps the tool's signature
    (functools.wraps), which is what the SDK reads the argument schema from."""

    def decorate(
        tool: Callable[P, Awaitable[CallToolResult]],
    ) -> Callable[P, Awaitable[CallToolResult]]:
        signature = inspect.signature(tool)

        @functools.wraps(tool)
        async def answer(*args: P.args, **kwargs: P.kwargs) -> CallToolResult:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            key = (
                tool.__name__,
                *(
                    base_url(value) if isinstance(value, Context) else (name, value)
                    for name, value in bound.arguments.items()
                ),
            )
            return await ANSWERS.get_or_make(key, lambda: tool(*args, **kwargs))

        return answer

    return decorate
