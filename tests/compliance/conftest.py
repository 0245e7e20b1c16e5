"""Fixtures of the compliance suite: data repositories built with GitPython, API keys, and a
client that speaks to the live server with a key."""

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from compliance_site.access.keys import api_key_create
from compliance_site.records.reindex import ReindexReport, reindex
from tests.compliance.builders import DataRepo


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
def api_key(transactional_db) -> str:
    _key, raw = api_key_create(name="integration tests", rate_limit_per_minute=1000)
    return raw


@pytest.fixture
def api(live_server, api_key) -> Iterator[httpx.Client]:
    """A client on the live server that sends a valid API key."""
    headers = {"Authorization": f"Bearer {api_key}"}
    with httpx.Client(
        base_url=live_server.url + "/api/v1/compliance", headers=headers, timeout=30
    ) as client:
        yield client


@pytest.fixture
def anonymous(live_server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=live_server.url + "/api/v1/compliance", timeout=30) as client:
        yield client
