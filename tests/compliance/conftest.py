"""Fixtures of the compliance suite: data repositories built with GitPython, API keys, and
clients of the application in the test's own process (tests/support/inprocess.py), one with a key.

Tests of the server itself (gunicorn workers, nginx, outages) start their own; see
docs/testing.md."""

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from compliance_site.records.reindex import ReindexReport, reindex
from tests.compliance.builders import DataRepo
from tests.support.compliance_factories import ApiKeyFactory
from tests.support.inprocess import BASE_URL, DjangoTransport, ServedQueries

API = BASE_URL + "/api/v1/compliance"


@pytest.fixture
def data_repo(tmp_path, settings) -> DataRepo:
    repo = DataRepo(tmp_path / "data")
    settings.COMPLIANCE_DATA_REPO = repo.path
    return repo


@pytest.fixture
def run_reindex(data_repo):
    def run(**kwargs: Any) -> ReindexReport:
        return reindex(repo_path=str(data_repo.path), **kwargs)

    return run


@pytest.fixture
def api_key(db) -> str:
    return ApiKeyFactory(name="integration tests", rate_limit_per_minute=1000).raw_key


@pytest.fixture
def api(db, served_queries: ServedQueries, api_key: str) -> Iterator[httpx.Client]:
    """A client of the compliance API that sends a valid API key."""
    headers = {"Authorization": f"Bearer {api_key}"}
    transport = DjangoTransport(served_queries)
    with httpx.Client(transport=transport, base_url=API, headers=headers, timeout=30) as client:
        yield client


@pytest.fixture
def anonymous(db, served_queries: ServedQueries) -> Iterator[httpx.Client]:
    transport = DjangoTransport(served_queries)
    with httpx.Client(transport=transport, base_url=API, timeout=30) as client:
        yield client
