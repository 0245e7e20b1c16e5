"""The example environment files name every setting the code reads, and nothing else; the
systemd units pass `systemd-analyze verify`."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import COMMAND_BOUND_SECONDS, REPO_ROOT

DEPLOY = REPO_ROOT / "deploy"
# A setting read through shared.env (env_str("NAME", ...)), os.environ.get("NAME", ...), or the
# database URL a project names to shared.settings_base (db_env="NAME").
_READ = re.compile(
    r"""(?:env_(?:str|int|bool|list|float|rate)\(|environ\.get\(|db_env=)\s*["']([A-Z][A-Z0-9_]*)["']"""
)
_LISTED = re.compile(r"^#? ?([A-Z][A-Z0-9_]*)=", re.MULTILINE)


def _read_by(*paths: Path) -> set[str]:
    names = set()
    for path in paths:
        for source in [path] if path.is_file() else path.rglob("*.py"):
            names.update(_READ.findall(source.read_text()))
    return names


@pytest.mark.parametrize("service", ["news", "compliance"])
def test_the_example_env_file_lists_every_setting_the_service_reads(service: str):
    read = _read_by(
        REPO_ROOT / "shared",
        REPO_ROOT / f"{service}_site",
        DEPLOY / "gunicorn" / f"{service}.py",
    )
    listed = set(_LISTED.findall((DEPLOY / "env" / f"{service}.env.example").read_text()))

    assert read - listed == set(), "read by the code, missing from the example"
    assert listed - read == set(), "in the example, read by nothing"


def test_the_systemd_units_pass_systemd_analyze_verify(tmp_path: Path):
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed")
    units = sorted((DEPLOY / "systemd").glob("*.*"))
    for unit in units:
        # The checkout stands in for the production one, so the commands exist.
        text = unit.read_text().replace("/srv/platform", str(REPO_ROOT))
        (tmp_path / unit.name).write_text(text)

    result = subprocess.run(
        [analyze, "verify", "--man=no", *(str(tmp_path / unit.name) for unit in units)],
        capture_output=True,
        text=True,
        timeout=COMMAND_BOUND_SECONDS,
    )

    assert {unit.suffix for unit in units} == {".service", ".timer"}
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
