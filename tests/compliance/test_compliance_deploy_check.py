"""Production settings pass Django's deployment checklist, and the schema is valid."""

import os
import subprocess
import sys

from tests.conftest import REPO_ROOT


def manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if k not in {"DEBUG", "SECURE_SSL_REDIRECT"}}
    return subprocess.run(
        [sys.executable, "-m", "compliance_site", *args],
        cwd=REPO_ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_check_deploy_is_clean_with_production_settings():
    result = manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        SECRET_KEY="a-long-random-production-secret-" + "x" * 40,
        ALLOWED_HOSTS="compliance.example",
        REDIS_URL="redis://127.0.0.1:6379/15",
    )

    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout


def test_production_refuses_to_start_without_a_secret_key():
    result = manage("check", SECRET_KEY="")

    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr


def test_the_openapi_schema_validates():
    result = manage(
        "spectacular", "--validate", "--fail-on-warn", "--file", os.devnull, DEBUG="true"
    )

    assert result.returncode == 0, result.stderr
