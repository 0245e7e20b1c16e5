"""Settings come from the environment; a value that cannot be read stops the start with the
variable's name, never a bare ValueError from deep inside the settings module."""

import os
import subprocess
import sys

import pytest
from django.core.exceptions import ImproperlyConfigured
from hypothesis import given
from hypothesis import strategies as st

from shared.env import Rate, env_float, env_rate
from tests.conftest import COMMAND_BOUND_SECONDS


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
        timeout=COMMAND_BOUND_SECONDS,
    )

    assert result.returncode != 0
    assert f"ImproperlyConfigured: {name} must be a number, got 'high'" in result.stderr


@pytest.mark.parametrize(
    ("raw", "rate"),
    [
        ("30/m", Rate(30, 60)),
        ("10/15m", Rate(10, 900)),
        (" 5 / h ", Rate(5, 3600)),
        ("", Rate(7, 1)),
    ],
)
def test_env_rate_reads_the_one_notation_of_every_limit(monkeypatch, raw, rate):
    monkeypatch.setenv("SOME_RATE", raw)

    assert Rate.parse(env_rate("SOME_RATE", "7/s")) == rate


@pytest.mark.parametrize("raw", ["30", "30 per minute", "0/m", "30/0m", "30/w", "-1/m", "m/30"])
def test_env_rate_names_the_variable_for_a_bad_value(monkeypatch, raw):
    monkeypatch.setenv("SOME_RATE", raw)

    with pytest.raises(ImproperlyConfigured, match="SOME_RATE"):
        env_rate("SOME_RATE", "30/m")


@given(st.integers(1, 10**9), st.integers(1, 1000), st.sampled_from("smhd"))
def test_every_written_rate_reads_back(count, multiplier, unit):
    seconds = {"s": 1, "m": 60, "h": 3600, "d": 86400}[unit]

    assert Rate.parse(f"{count}/{multiplier}{unit}") == Rate(count, multiplier * seconds)


def test_a_bad_rate_setting_stops_the_service_with_its_name():
    result = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "news_site.settings",
            "NEWS_SEARCH_RATE_LIMIT": "30",
        },
        capture_output=True,
        text=True,
        timeout=COMMAND_BOUND_SECONDS,
    )

    assert result.returncode != 0
    assert "ImproperlyConfigured: NEWS_SEARCH_RATE_LIMIT: a rate looks like" in result.stderr
