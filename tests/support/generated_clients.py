"""A service's Python client as an app developer builds it: `openapi-python-client` run on the
schema the live service serves, in a temporary directory (nothing generated is kept), and
imported. The generator must not warn: a warning means a part of the API the client lacks."""

import importlib
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

import httpx

from tests.conftest import COMMAND_BOUND_SECONDS


@contextmanager
def generated_client(schema_url: str, package: str, workdir: Path) -> Iterator[ModuleType]:
    """The client package `package`, generated from the schema at `schema_url`; unimported on
    exit, so that another test can generate it again."""
    schema = workdir / f"{package}.json"
    answer = httpx.get(schema_url, params={"format": "json"}, timeout=30)
    answer.raise_for_status()
    schema.write_bytes(answer.content)
    bin_dir = Path(sys.executable).parent
    result = subprocess.run(
        [
            str(bin_dir / "openapi-python-client"),
            "generate",
            "--path",
            str(schema),
            "--output-path",
            str(workdir / package),
            "--meta",
            "none",
        ],
        capture_output=True,
        text=True,
        # The generator formats its output with ruff, which it looks up on PATH.
        env={**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"},
        timeout=COMMAND_BOUND_SECONDS,
        check=False,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "warning" not in output.lower(), output
    sys.path.insert(0, str(workdir))
    try:
        yield importlib.import_module(package)
    finally:
        sys.path.remove(str(workdir))
        for name in [name for name in sys.modules if name.split(".")[0] == package]:
            del sys.modules[name]
