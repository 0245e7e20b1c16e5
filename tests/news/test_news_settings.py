"""Settings come from the environment; a value that cannot be read stops the start with the
variable's name, never a bare ValueError from deep inside the settings module."""

import os
import subprocess
import sys

import pytest
from django.core.exceptions import ImproperlyConfigured
from hypothesis import given
from hypothesis import strategies as st

from shared.env import env_float


@pytest.mark.parametrize("raw", ["abc", "1,5", "nan", "inf", "0x10"])
def test_env_float_names_the_variable_for_a_bad_value(monkeypatch, raw):
    monkeypatch.setenv("SOME_SCORE", raw)

    with pytest.raises(ImproperlyConfigured, match="SOME_SCORE"):
        env_float("SOME_SCORE", 0.3)


@pytest.mark.parametrize(("raw", "value"), [("0.5", 0.5), ("2", 2.0), (" 1e-3 ", 0.001), ("", 0.3)])
def test_env_float_reads_numbers_and_defaults_when_empty(monkeypatch, raw, value):
    monkeypatch.setenv("SOME_SCORE", raw)

    assert env_float("SOME_SCORE", 0.3) == value


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_env_float_reads_back_every_finite_float(value):
    os.environ["SOME_SCORE"] = repr(value)
    try:
        assert env_float("SOME_SCORE", 0.0) == value
    finally:
        del os.environ["SOME_SCORE"]


@pytest.mark.parametrize("name", ["NEWS_SEMANTIC_MIN_SCORE", "NEWS_LLM_RETRY_BASE_SECONDS"])
def test_a_bad_float_setting_stops_the_service_with_its_name(name):
    result = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "news_site.settings", name: "high"},
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert result.returncode != 0
    assert f"ImproperlyConfigured: {name} must be a number, got 'high'" in result.stderr
