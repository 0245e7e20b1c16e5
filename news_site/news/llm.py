"""Working with the configured chat model: its lifetime in a run, and reading its answers."""

import re
from collections.abc import Iterator
from contextlib import contextmanager

from news_site.news.summarise import ChatModel

# Models wrap JSON in a Markdown code fence now and then, asked not to or not.
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$")


@contextmanager
def model_from_settings() -> Iterator[ChatModel | None]:
    """The configured model (None when NEWS_LLM_* configure none), closed when the block ends:
    its HTTP client holds connections to the model's server."""
    model = ChatModel.from_settings()
    try:
        yield model
    finally:
        if model is not None:
            model.close()


def strip_code_fence(content: str) -> str:
    """The model's answer without a Markdown code fence around it."""
    return _FENCE.sub("", content.strip())
