"""Fixtures of the reader's pages' tests."""

import pytest


@pytest.fixture
def keyword_only(settings):
    """The search box's answers without the embedding model (its mode is the API's choice)."""
    settings.NEWS_EMBEDDING_MODEL = "off"
    return settings
