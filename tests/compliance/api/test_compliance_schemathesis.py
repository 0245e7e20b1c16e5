"""schemathesis over the compliance API's OpenAPI schema (/api/v1/compliance/schema) against the
live server, with a valid API key on every request and every check schemathesis has: no 5xx;
statuses, content types, headers and bodies as documented; data the schema allows is accepted
and data it forbids rejected; the key enforced where the schema requires one; 405 with `Allow`
for undeclared methods; and the rest. Its examples, coverage and fuzzing phases run in both
generation modes (positive and negative).

It runs as schemathesis' own CLI (`st run`) in a subprocess: its pytest integration
(`schemathesis.pytest.from_fixture`) does not work with pytest 9, and the CLI runs the coverage
phase (undeclared methods, missing and boundary values), which plain `as_strategy()` does not.

The limits are lifted so that a 429 hides nothing (they are tested in tests/compliance/access).
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from compliance_site.access.keys import api_key_create
from tests.compliance.builders import ESA

pytestmark = pytest.mark.django_db(transaction=True)

# The stateful phase needs OpenAPI links between operations; this read-only API has none (and no
# operation creates anything), so it would only report that it has nothing to do. For the same
# reason the resource-lifecycle checks (use_after_free, ensure_resource_availability,
# object_level_authorization) find no created resources to follow: they run, and pass vacuously.
PHASES = "examples,coverage,fuzzing"
ROOT = Path(__file__).resolve().parents[3]
MAX_EXAMPLES = 30


def test_every_operation_answers_as_documented(
    live_server, data_repo, run_reindex, settings, tmp_path
):
    settings.COMPLIANCE_ANONYMOUS_RATE_LIMIT = "1000000/m"
    data_repo.seed("TX", "CA")
    data_repo.update("TX", summary="Second.", esa_program=ESA)
    run_reindex()
    _key, raw = api_key_create(name="schemathesis", rate_limit_per_minute=1_000_000)

    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "schemathesis.cli",
            "run",
            f"{live_server.url}/api/v1/compliance/schema",
            "--checks",
            "all",
            "--phases",
            PHASES,
            "--mode",
            "all",
            "--max-examples",
            str(MAX_EXAMPLES),
            "--seed",
            "20260314",
            "--workers",
            "1",
            "--header",
            f"Authorization: Bearer {raw}",
            "--generation-database",
            "none",
            "--request-timeout",
            "10",
            "--no-color",
        ],
        env={
            **os.environ,
            "SCHEMATHESIS_HOOKS": "tests.compliance.api.schemathesis_hooks",
            "PYTHONPATH": str(ROOT),
        },
        # The CLI keeps a cache of failures under ./.schemathesis: not in the repository.
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )

    report = result.stdout + result.stderr
    assert result.returncode == 0, report
    # Every operation went through every phase.
    for phase in ("Examples", "Coverage", "Fuzzing"):
        assert f"✅ {phase}" in report, report
    assert "Tested: 9" in report, report
