"""The configured chat model's lifetime in a run (its answers are read in
news_site.news.summarise, strip_code_fence)."""

from collections.abc import Iterator
from contextlib import contextmanager

from news_site.news.summarise import ChatModel


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
