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

from shared.cache_connection import cache_options
from shared.env import env_int, env_str

REPO_ROOT = Path(__file__).resolve().parent.parent
# The quick start keeps its SQLite files and demo repository here (git-ignored); VAR_DIR moves it
# (the browser tests run a quick start of their own beside a developer's).
VAR_DIR = Path(os.environ.get("VAR_DIR") or REPO_ROOT / "var").resolve()

# The contrib apps both services use (admin for editors and operators).
DJANGO_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
]
# Apps of shared/ both services install: the database fallback of the authentication limits.
SHARED_APPS = ["shared.limits"]

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
    raise ImproperlyConfigured(
        "SECRET_KEY is not set: run `make run` once (it writes one into .env), "
        "or export SECRET_KEY (see docs/operators.md)"
    )


def database(*, db_env: str, sqlite_name: str) -> dict[str, Any]:
    """The database from `db_env` (a URL), or an embedded SQLite file for the quick start."""
    url = env_str(db_env)
    if url:
        config: dict[str, Any] = dict(dj_database_url.parse(url, conn_max_age=0))
        config["CONN_HEALTH_CHECKS"] = True
        # A database that does not answer fails a request in seconds (503), not a TCP timeout.
        if config["ENGINE"].endswith("postgresql"):
            options = config.setdefault("OPTIONS", {})
            options.setdefault("connect_timeout", 5)
            options.update(connection_pool())
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


def connection_pool() -> dict[str, Any]:
    """Each process borrows PostgreSQL connections from its own bounded pool (psycopg_pool via
    Django) and gives them back at the end of every request, so a burst can never open more
    than DB_POOL_MAX_SIZE connections per process. A request that finds the pool empty waits
    DB_POOL_TIMEOUT seconds at most, then fails with a 503 (shared/outages.py). Sizing and the
    budget across both services: docs/operators-capacity.md. DB_POOL_MAX_SIZE=0 turns the pool
    off (one connection per request, for a pgbouncer in front)."""
    max_size = env_int("DB_POOL_MAX_SIZE", 4)
    if max_size <= 0:
        return {}
    return {
        "pool": {
            "min_size": min(env_int("DB_POOL_MIN_SIZE", 1), max_size),
            "max_size": max_size,
            "timeout": env_int("DB_POOL_TIMEOUT", 2),
            # Idle connections above min_size are closed after a minute: a burst's
            # connections do not stay open for the next ten (psycopg_pool's default).
            "max_idle": 60,
        }
    }


def static_root(project: str) -> str:
    """collectstatic's folder for nginx in production. WhiteNoise (STATIC_MIDDLEWARE) serves
    the apps' files straight from their folders, so `make run` needs no collectstatic, but it
    warns when this folder is missing."""
    folder = VAR_DIR / "static" / project
    folder.mkdir(parents=True, exist_ok=True)
    return str(folder)


def cache(key_prefix: str) -> dict[str, Any]:
    """Redis when REDIS_URL is set (shared by every process); else a per-process cache."""
    url = env_str("REDIS_URL")
    if url:
        return {
            "BACKEND": "django_redis.cache.RedisCache",
            "LOCATION": url,
            "KEY_PREFIX": key_prefix,
            "TIMEOUT": 300,
            # One client per process; bounded: a Redis that hangs costs a process one timeout
            # (shared/cache_connection.py).
            "OPTIONS": cache_options(url),
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
    """django-ratelimit lists django-redis among its caches. Without Redis there is one process
    (the quick start), so a local cache is shared by everything that counts."""
    return [] if uses_redis else ["django_ratelimit.W001", "django_ratelimit.E003"]


# Right after SecurityMiddleware in both projects: static files, then the audience's language
# and clock (shared/audience.py).
STATIC_MIDDLEWARE = "whitenoise.middleware.WhiteNoiseMiddleware"
# Files served at the site's root by WhiteNoise (WHITENOISE_ROOT): the favicon browsers ask
# every page for, which was otherwise a 404 and a warning in the log per admin page.
ROOT_FILES = str(Path(__file__).resolve().parent / "root_files")
AUDIENCE_MIDDLEWARE = "shared.audience.AudienceMiddleware"

# The first two of both projects' middleware: request ids, access lines and request metrics,
# then /metrics, answered before the host check and the HTTPS redirect (shared/metrics.py).
OBSERVABILITY_MIDDLEWARE = [
    "shared.observability.RequestObservabilityMiddleware",
    "shared.metrics.MetricsMiddleware",
    # Then an oversized body is refused (413) before anything reads it (shared/http.py).
    "shared.http.BodyTooLargeMiddleware",
]
