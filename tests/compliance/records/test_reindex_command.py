"""`python -m compliance_site reindex` as operators run it: a real process, real exit codes."""

import os
import subprocess
import sys

import pytest
from django.conf import settings as django_settings

from tests.compliance.builders import ESA, state_payload
from tests.conftest import COMMAND_BOUND_SECONDS, REPO_ROOT, database_url_for_subprocess

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.every_backend]


def reindex_cli(repo_path, *args: str) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "COMPLIANCE_DATABASE_URL": database_url_for_subprocess(
            django_settings.DATABASES["default"]
        ),
    }
    return subprocess.run(
        [sys.executable, "-m", "compliance_site", "reindex", "--repo", str(repo_path), *args],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=COMMAND_BOUND_SECONDS,
    )


def test_a_clean_run_exits_zero_and_says_what_it_published(data_repo):
    data_repo.write("TX", state_payload("TX", esa_program=ESA))
    data_repo.commit("Seed")

    result = reindex_cli(data_repo.path)

    assert result.returncode == 0, result.stderr
    assert "1 commits read, published 1 Citation, 1 EsaProgram, 1 State" in result.stdout
    again = reindex_cli(data_repo.path)
    assert again.returncode == 0
    assert "0 commits read, published nothing" in again.stdout


def test_an_invalid_file_is_reported_with_file_commit_and_schema_path(data_repo):
    data_repo.seed("TX", "CA")
    data_repo.write("TX", state_payload("TX", notice={"required": "sometimes"}))
    data_repo.write("CA", state_payload("CA", summary="Good edit."))
    sha = data_repo.commit("One good, one bad")

    result = reindex_cli(data_repo.path)

    assert result.returncode == 1
    assert f"invalid: states/TX.yaml at {sha[:12]}" in result.stderr
    assert "[schema: properties/notice/properties/required/type]" in result.stderr
    assert "2 commits read, published 2 Citation, 3 State" in result.stdout


def test_a_rewritten_history_stops_with_exit_code_2_until_allowed(data_repo):
    data_repo.seed("TX")
    data_repo.update("TX", summary="Two.")
    assert reindex_cli(data_repo.path).returncode == 0
    data_repo.repo.git.reset("--hard", "HEAD~1")
    data_repo.update("TX", summary="Other two.")

    refused = reindex_cli(data_repo.path)
    allowed = reindex_cli(data_repo.path, "--allow-rewritten-history")

    assert refused.returncode == 2
    assert "history was rewritten" in refused.stderr
    assert allowed.returncode == 0
    assert "history rewritten from" in allowed.stdout


def test_a_missing_repository_is_a_clear_error(tmp_path):
    result = reindex_cli(tmp_path / "nowhere")

    assert result.returncode == 2
    assert "is not a git repository" in result.stderr
    assert "Traceback" not in result.stderr
