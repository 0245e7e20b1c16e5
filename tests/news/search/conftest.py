"""Fixtures of the search tests."""

import pytest


@pytest.fixture
def keyword_only(settings):
    settings.NEWS_EMBEDDING_MODEL = "off"
    return settings


@pytest.fixture
def semantic(settings):
    """The real offline model (the `semantic` extra); its index starts empty for each test."""
    pytest.importorskip("onnxruntime")
    from news_site.search.embeddings import embeddings_available
    from news_site.search.vector_index import INDEX

    settings.NEWS_EMBEDDING_MODEL = ""
    if not embeddings_available():
        pytest.skip("the embedding model is not installed")
    INDEX.reset()
    yield settings
    INDEX.reset()
