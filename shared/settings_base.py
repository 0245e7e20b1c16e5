"""Settings both projects share, imported by name into each project's settings module.

Everything comes from the environment (12-factor). Without DEBUG or SECRET_KEY set, the
services refuse to start in production mode with a made-up secret.
"""

import os
from pathlib import Path
from typing import Any

import dj_database_url
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

from shared.env import env_int, env_str

REPO_ROOT = Path(__file__).resolve().parent.parent
# The quick start keeps its SQLite files and demo repository here (git-ignored).
VAR_DIR = REPO_ROOT / "var"

# The contrib apps both services use (admin for editors and operators).
DJANGO_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
]

# A JSON, Markdown or RSS response loads nothing and may not be framed.
API_CSP_DIRECTIVES = {
    "default-src": [NONE],
    "base-uri": [NONE],
    "form-action": [NONE],
    "frame-ancestors": [NONE],
}
# The admin's CSS, JS and icons come from /static/ on the same origin; its scripts are files
# (no inline script), so neither 'unsafe-inline' nor a nonce is needed.
ADMIN_CSP_DIRECTIVES = {
    "default-src": [SELF],
    "img-src": [SELF, "data:"],
    "object-src": [NONE],
    "base-uri": [NONE],
    "form-action": [SELF],
    "frame-ancestors": [NONE],
}

_INSECURE_DEV_KEY = "insecure-development-key-do-not-use-in-production"


def secret_key(debug: bool) -> str:
    key = env_str("SECRET_KEY")
    if key:
        return key
    if debug:
        return _INSECURE_DEV_KEY
    raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off")


def database(*, db_env: str, sqlite_name: str) -> dict[str, Any]:
    """The database from `db_env` (a URL), or an embedded SQLite file for the quick start."""
    url = env_str(db_env)
    if url:
        config = dj_database_url.parse(url, conn_max_age=env_int("DB_CONN_MAX_AGE", 60))
        config["CONN_HEALTH_CHECKS"] = True
        # A database that does not answer fails a request in seconds (503), not a TCP timeout.
        if config["ENGINE"].endswith("postgresql"):
            config.setdefault("OPTIONS", {}).setdefault("connect_timeout", 5)
    else:
        VAR_DIR.mkdir(exist_ok=True)
        config = {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": str(VAR_DIR / f"{sqlite_name}.sqlite3"),
            "OPTIONS": {"timeout": 20, "transaction_mode": "IMMEDIATE"},
        }
    # The test database of SQLite is a file too, so that gunicorn processes started by the
    # tests see the same data as the test process (they are handed its path). One file per
    # test process, so that test runs side by side do not share one.
    if config["ENGINE"].endswith("sqlite3"):
        VAR_DIR.mkdir(exist_ok=True)
        config["TEST"] = {"NAME": str(VAR_DIR / f"test_{sqlite_name}_{os.getpid()}.sqlite3")}
    return config


def cache(key_prefix: str) -> dict[str, Any]:
    """Redis when REDIS_URL is set (shared by every process); else a per-process cache."""
    url = env_str("REDIS_URL")
    if url:
        return {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": url,
            "KEY_PREFIX": key_prefix,
            "TIMEOUT": 300,
            "OPTIONS": {"socket_connect_timeout": 2, "socket_timeout": 2},
        }
    return {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
        "LOCATION": key_prefix,
        "TIMEOUT": 300,
    }


# Django's template engine with the context the admin needs.
DJANGO_TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]

# A year of HSTS once a service is served over HTTPS only.
HSTS_SECONDS = 31536000


def silenced_checks(*, uses_redis: bool) -> list[str]:
    """django-ratelimit does not list Django's own RedisCache, whose incr is Redis' atomic
    INCRBY. Without Redis there is one process (the quick start), so a local cache is shared by
    everything that counts."""
    return ["django_ratelimit.W001"] + ([] if uses_redis else ["django_ratelimit.E003"])


# The first two of both projects' middleware: request ids, access lines and request metrics,
# then /metrics, answered before the host check and the HTTPS redirect (shared/metrics.py).
OBSERVABILITY_MIDDLEWARE = [
    "shared.observability.RequestObservabilityMiddleware",
    "shared.metrics.MetricsMiddleware",
]
