"""Settings both projects share. Each project's settings module starts from `base_settings()`.

Everything comes from the environment (12-factor). Without DEBUG or SECRET_KEY set, the
services refuse to start in production mode with a made-up secret.
"""

import os
from pathlib import Path
from typing import Any

import dj_database_url
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

from shared.env import env_bool, env_int, env_list, env_str
from shared.logs import logging_config

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


def database(env_name: str, sqlite_name: str) -> dict[str, Any]:
    """The database from `env_name` (a URL), or an embedded SQLite file for the quick start."""
    url = env_str(env_name)
    if url:
        config = dj_database_url.parse(url, conn_max_age=0)
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


def base_settings(*, project: str, db_env: str) -> dict[str, Any]:
    debug = env_bool("DEBUG", False)
    # WhiteNoise also serves collectstatic's copy and warns when its folder is missing.
    static_root = VAR_DIR / "static" / project
    static_root.mkdir(parents=True, exist_ok=True)
    uses_redis = bool(env_str("REDIS_URL"))
    ssl_redirect = env_bool("SECURE_SSL_REDIRECT", not debug)
    return {
        "DEBUG": debug,
        "SECRET_KEY": secret_key(debug),
        "ALLOWED_HOSTS": env_list("ALLOWED_HOSTS", "127.0.0.1,localhost"),
        "DATABASES": {"default": database(db_env, project)},
        "CACHES": {"default": cache(project)},
        "DEFAULT_AUTO_FIELD": "django.db.models.BigAutoField",
        "USE_TZ": True,
        "TIME_ZONE": "UTC",
        "USE_I18N": True,
        # shared/audience.py: English for APIs, the display zone (named) for pages for people.
        "ENGLISH_PATHS": r"^/api/",
        "DISPLAY_TIME_ZONE": env_str("DISPLAY_TIME_ZONE", "Europe/Stockholm"),
        "DISPLAY_TIME_ZONE_PATHS": r"^/admin/",
        "FORMAT_MODULE_PATH": ["shared.formats"],
        "TEMPLATES": [
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
        ],
        "STATIC_URL": "static/",
        # WhiteNoise (STATIC_MIDDLEWARE) serves the apps' static files straight from their
        # folders, so `make run` needs no collectstatic; nginx serves the collected copy in
        # production and never passes /static/ on.
        "WHITENOISE_USE_FINDERS": True,
        "STATIC_ROOT": str(static_root),
        # Neither service stores uploads; a media prefix keeps test servers from treating every
        # path as a media file.
        "MEDIA_URL": "media/",
        "MEDIA_ROOT": str(VAR_DIR / "media" / project),
        # Secure by default; plain-loopback deployments turn SECURE_SSL_REDIRECT off.
        "SECURE_SSL_REDIRECT": ssl_redirect,
        "SESSION_COOKIE_SECURE": ssl_redirect,
        "CSRF_COOKIE_SECURE": ssl_redirect,
        "SECURE_HSTS_SECONDS": env_int("SECURE_HSTS_SECONDS", 31536000 if ssl_redirect else 0),
        "SECURE_HSTS_INCLUDE_SUBDOMAINS": ssl_redirect,
        "SECURE_HSTS_PRELOAD": ssl_redirect,
        "SECURE_PROXY_SSL_HEADER": ("HTTP_X_FORWARDED_PROTO", "https"),
        "SECURE_CONTENT_TYPE_NOSNIFF": True,
        "SECURE_REFERRER_POLICY": "same-origin",
        "X_FRAME_OPTIONS": "DENY",
        # Content-Security-Policy (shared/security.py): nothing at all for the APIs, the
        # admin's own static files for the admin.
        "CONTENT_SECURITY_POLICY": {"DIRECTIVES": API_CSP_DIRECTIVES},
        "ADMIN_CONTENT_SECURITY_POLICY": {"DIRECTIVES": ADMIN_CSP_DIRECTIVES},
        # Admin login attempts per client IP and username, and per client IP over all usernames
        # (shared/security.py, docs/auth-and-limits.md).
        "ADMIN_LOGIN_RATE_LIMIT": env_int("ADMIN_LOGIN_RATE_LIMIT", 10),
        "ADMIN_LOGIN_IP_RATE_LIMIT": env_int("ADMIN_LOGIN_IP_RATE_LIMIT", 50),
        "ADMIN_LOGIN_RATE_WINDOW_SECONDS": env_int("ADMIN_LOGIN_RATE_WINDOW_SECONDS", 15 * 60),
        # Only these proxies may tell us the client address (X-Forwarded-For / X-Real-IP).
        "TRUSTED_PROXIES": env_list("TRUSTED_PROXIES"),
        "FETCH_ALLOW_PRIVATE_NETWORKS": env_bool("FETCH_ALLOW_PRIVATE_NETWORKS", False),
        "RATELIMIT_USE_CACHE": "default",
        # django-ratelimit does not list Django's own RedisCache, whose incr is Redis' atomic
        # INCRBY. Without Redis there is one process (the quick start), so a local cache is
        # shared by everything that counts.
        "SILENCED_SYSTEM_CHECKS": ["django_ratelimit.W001"]
        + ([] if uses_redis else ["django_ratelimit.E003"]),
        # JSON lines on stderr, each with the id of the request it belongs to (shared/logs.py).
        "LOGGING": logging_config(service=project, level=env_str("LOG_LEVEL", "INFO")),
        # Who may read /metrics (addresses or networks); nginx never passes the path on.
        "METRICS_ALLOWED_IPS": env_list("METRICS_ALLOWED_IPS", "127.0.0.1,::1"),
        # Collectors that report batch-job results from the database at scrape time.
        "METRICS_COLLECTORS": [],
    }


# Right after SecurityMiddleware in both projects: static files, then the audience's language
# and clock (shared/audience.py).
STATIC_MIDDLEWARE = "whitenoise.middleware.WhiteNoiseMiddleware"
AUDIENCE_MIDDLEWARE = "shared.audience.AudienceMiddleware"

# The first two of both projects' middleware: request ids, access lines and request metrics,
# then /metrics, answered before the host check and the HTTPS redirect (shared/metrics.py).
OBSERVABILITY_MIDDLEWARE = [
    "shared.observability.RequestObservabilityMiddleware",
    "shared.metrics.MetricsMiddleware",
    # Then an oversized body is refused (413) before anything reads it (shared/http.py).
    "shared.http.BodyTooLargeMiddleware",
]
