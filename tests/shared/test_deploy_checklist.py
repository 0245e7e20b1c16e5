"""Both services' production settings pass Django's deployment checklist, refuse to start
without a secret, and publish a valid OpenAPI schema (each project in its own process)."""

import os
import subprocess
import sys

import pytest

from tests.conftest import COMMAND_BOUND_SECONDS, REPO_ROOT

PROJECTS = pytest.mark.parametrize(
    "project, host", [("news_site", "news.example"), ("compliance_site", "compliance.example")]
)


def manage(project: str, *args: str, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in {"DEBUG", "SECURE_SSL_REDIRECT"}}
    return subprocess.run(
        [sys.executable, "-m", project, *args],
        cwd=REPO_ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=COMMAND_BOUND_SECONDS,
    )


@PROJECTS
def test_check_deploy_is_clean_with_production_settings(project, host):
    result = manage(
        project,
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        SECRET_KEY="a-long-random-production-secret-" + "x" * 40,
        ALLOWED_HOSTS=host,
        REDIS_URL="redis://127.0.0.1:6379/15",
    )

    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout


@PROJECTS
def test_production_refuses_to_start_without_a_secret_key(project, host):
    result = manage(project, "check", SECRET_KEY="")

    assert result.returncode != 0
    # One line that says what to do, not a traceback.
    assert "SECRET_KEY is not set" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr


@PROJECTS
def test_the_openapi_schema_validates(project, host):
    result = manage(
        project, "spectacular", "--validate", "--fail-on-warn", "--file", os.devnull, DEBUG="true"
    )

    assert result.returncode == 0, result.stderr
