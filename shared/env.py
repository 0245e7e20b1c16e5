"""Typed settings from the environment that fail loudly on a value they cannot read."""

import functools
import math
import os
import re
from dataclasses import dataclass

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (true/false), got {raw!r}")


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be an integer, got {raw!r}") from exc


def env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = float(raw)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be a number, got {raw!r}") from exc
    # nan and inf parse but make no sense as a delay or a score.
    if not math.isfinite(value):
        raise ImproperlyConfigured(f"{name} must be a finite number, got {raw!r}")
    return value


def env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


# The one notation of every rate limit in both services, django-ratelimit's: calls "/" an
# optional multiplier and a unit, e.g. `30/m`, `10/15m`, `5/h`.
_RATE = re.compile(r"^\s*(\d+)\s*/\s*(\d*)\s*([smhd])\s*$")
_PERIOD_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


@dataclass(frozen=True)
class Rate:
    limit: int
    window_seconds: int

    @staticmethod
    @functools.lru_cache(maxsize=64)
    def parse(value: str) -> "Rate":
        """`30/m` as Rate(30, 60), `10/15m` as Rate(10, 900); ValueError for anything else."""
        match = _RATE.match(value)
        if match is None or int(match[1]) < 1 or match[2] == "0":
            raise ValueError(f"a rate looks like 30/m or 10/15m, got {value!r}")
        count, multiplier, unit = match.groups()
        return Rate(int(count), int(multiplier or 1) * _PERIOD_SECONDS[unit])


def env_rate(name: str, default: str) -> str:
    """A rate limit in django-ratelimit's notation, checked now so that a typo stops the start."""
    value = os.environ.get(name, "").strip() or default
    try:
        Rate.parse(value)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name}: {exc}") from exc
    return value
