"""A serving process freezes what its application loaded, so the garbage collector's full
collections scan only what requests leave behind (shared/heap.py)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# What the process froze and what it leaves in the collector's sight once the application
# module is imported, as a server imports it.
PROBE = """
import gc, importlib, json, sys
importlib.import_module(sys.argv[1])
print(json.dumps({"frozen": gc.get_freeze_count(), "tracked": len(gc.get_objects())}))
"""


@pytest.mark.parametrize(
    ("module", "settings"),
    [
        ("news_site.asgi", "news_site.settings"),
        ("compliance_site.wsgi", "compliance_site.settings"),
    ],
)
def test_an_application_module_leaves_the_collector_only_what_requests_make(module, settings):
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": settings}
    probe = subprocess.run(
        [sys.executable, "-c", PROBE, module],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    heap = json.loads(probe.stdout.splitlines()[-1])

    # Django, DRF and every view: tens of thousands of objects, all frozen.
    assert heap["frozen"] > 50_000
    assert heap["tracked"] < heap["frozen"] / 10
