"""Settings of the compliance data service, all from the environment (docs/settings.md).

Grouped by topic: core, database, cache, security, apps and middleware, language and time,
logging and metrics, the API, then the features (data repository, access, source monitor).
"""

from pathlib import Path

from shared.env import env_bool, env_int, env_list, env_rate, env_str
from shared.logs import logging_config
from shared.settings_base import (
    ADMIN_CSP_DIRECTIVES,
    API_CSP_DIRECTIVES,
    AUDIENCE_MIDDLEWARE,
    DJANGO_APPS,
    DJANGO_TEMPLATES,
    HSTS_SECONDS,
    OBSERVABILITY_MIDDLEWARE,
    ROOT_FILES,
    SHARED_APPS,
    STATIC_MIDDLEWARE,
    VAR_DIR,
    cache,
    database,
    secret_key,
    silenced_checks,
    static_root,
)

# --- Core ---------------------------------------------------------------------------------
DEBUG = env_bool("DEBUG", False)
SECRET_KEY = secret_key(DEBUG)
# Keys retired by a rotation, still accepted for what they signed (sessions, cursors and
# sync tokens integrators keep for months): rotate by moving SECRET_KEY here.
SECRET_KEY_FALLBACKS = env_list("SECRET_KEY_FALLBACKS")
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "127.0.0.1,localhost")
ROOT_URLCONF = "compliance_site.urls"
WSGI_APPLICATION = "compliance_site.wsgi.application"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
TEMPLATES = DJANGO_TEMPLATES
STATIC_URL = "static/"
STATIC_ROOT = static_root("compliance")
# WhiteNoise serves the apps' static files from their folders in every mode; nginx serves the
# collected copy in production and never passes /static/ on.
WHITENOISE_USE_FINDERS = True
# /favicon.ico and the other files a browser asks for at the root (shared/root_files/).
WHITENOISE_ROOT = ROOT_FILES
# The service stores no uploads; a media prefix keeps test servers from treating every path
# as a media file.
MEDIA_URL = "media/"
MEDIA_ROOT = str(VAR_DIR / "media" / "compliance")

# --- Database -----------------------------------------------------------------------------
DATABASES = {"default": database(db_env="COMPLIANCE_DATABASE_URL", sqlite_name="compliance")}

# --- Cache --------------------------------------------------------------------------------
# Redis when REDIS_URL is set (shared by every process), else a per-process cache.
CACHES = {"default": cache("compliance")}
RATELIMIT_USE_CACHE = "default"
SILENCED_SYSTEM_CHECKS = silenced_checks(uses_redis=bool(env_str("REDIS_URL")))

# --- Security (shared/security.py, docs/operators.md "Security") -----------------------------
# Secure by default; plain-loopback deployments turn SECURE_SSL_REDIRECT off.
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", not DEBUG)
# Browsers keep cookies per host, not per port: with the two services on one host, shared
# names would let one admin's login replace the other's session and CSRF token.
SESSION_COOKIE_NAME = "compliance_sessionid"
CSRF_COOKIE_NAME = "compliance_csrftoken"
SESSION_COOKIE_SECURE = SECURE_SSL_REDIRECT
CSRF_COOKIE_SECURE = SECURE_SSL_REDIRECT
# A refused form gets a page in the admin's look that says what happened (shared/csrf.py).
CSRF_FAILURE_VIEW = "shared.csrf.csrf_failure"
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", HSTS_SECONDS if SECURE_SSL_REDIRECT else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = SECURE_SSL_REDIRECT
SECURE_HSTS_PRELOAD = SECURE_SSL_REDIRECT
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# Only these proxies may tell us the client address (X-Forwarded-For / X-Real-IP).
TRUSTED_PROXIES = env_list("TRUSTED_PROXIES")
FETCH_ALLOW_PRIVATE_NETWORKS = env_bool("FETCH_ALLOW_PRIVATE_NETWORKS", False)
# Content-Security-Policy: nothing at all for the API, the admin's own static files for the
# admin.
CONTENT_SECURITY_POLICY = {"DIRECTIVES": API_CSP_DIRECTIVES}
ADMIN_CONTENT_SECURITY_POLICY = {"DIRECTIVES": ADMIN_CSP_DIRECTIVES}
# Every rate limit in these settings is written `calls/period` in django-ratelimit's notation
# (`30/m`, `10/15m`, `5/h`); a value that does not parse stops the start (shared/env.py).
# Admin login attempts per client IP and username, and per client IP over all usernames
# (shared/security.py, docs/auth-and-limits.md).
ADMIN_LOGIN_RATE_LIMIT = env_rate("ADMIN_LOGIN_RATE_LIMIT", "10/15m")
ADMIN_LOGIN_IP_RATE_LIMIT = env_rate("ADMIN_LOGIN_IP_RATE_LIMIT", "50/15m")

# --- Apps and middleware ------------------------------------------------------------------
INSTALLED_APPS = [
    *DJANGO_APPS,
    *SHARED_APPS,
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_ratelimit",
    "django_tasks",
    "django_tasks_db",
    "compliance_site.records",
    "compliance_site.monitoring",
    "compliance_site.access",
    "compliance_site.webhooks",
    "compliance_site.api",
    "compliance_site.landing",
]

MIDDLEWARE = [
    *OBSERVABILITY_MIDDLEWARE,
    "django.middleware.security.SecurityMiddleware",
    STATIC_MIDDLEWARE,
    AUDIENCE_MIDDLEWARE,
    "shared.security.SurfaceCSPMiddleware",
    "compliance_site.api.middleware.ApiAccessMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]
# Bodies over DATA_UPLOAD_MAX_MEMORY_SIZE (Django's 2.5 MB) get 413 in this shape.
PAYLOAD_TOO_LARGE_RESPONSE = "compliance_site.api.errors.payload_too_large"

# --- Language and time --------------------------------------------------------------------
USE_I18N = True
USE_TZ = True
TIME_ZONE = "UTC"
# shared/audience.py: the API answers in English; admin shows DISPLAY_TIME_ZONE with the
# zone's name, in the formats of shared/formats.
ENGLISH_PATHS = r"^/api/"
FORMAT_MODULE_PATH = ["shared.formats"]
# The admin is the integrators' (English, their time zone), not the news editors': its own
# setting, so one .env can give the news admin Stockholm and this one UTC, the API's clock.
DISPLAY_TIME_ZONE = env_str("COMPLIANCE_DISPLAY_TIME_ZONE", "UTC")
DISPLAY_TIME_ZONE_PATHS = r"^/admin/"

# --- Logging and metrics ------------------------------------------------------------------
# JSON lines on stderr, each with the id of the request it belongs to (shared/logs.py).
LOGGING = logging_config(
    service="compliance",
    level=env_str("LOG_LEVEL", "INFO"),
    # "text": readable lines for a terminal (the quick start's .env sets it).
    log_format=env_str("LOG_FORMAT", "json"),
)
# Who may read /metrics (addresses or networks); nginx never passes the path on.
METRICS_ALLOWED_IPS = env_list("METRICS_ALLOWED_IPS", "127.0.0.1,::1")
# /metrics reports reindex results from the runs recorded in the database.
METRICS_COLLECTORS = ["compliance_site.records.metrics.ReindexCollector"]

# --- API (Django REST Framework) ----------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [],
    "DEFAULT_PERMISSION_CLASSES": [],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": [],
    "EXCEPTION_HANDLER": "compliance_site.api.errors.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "UNAUTHENTICATED_USER": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Compliance Data Service",
    "DESCRIPTION": (
        "Versioned state-by-state homeschool compliance records for 51 jurisdictions. "
        "See docs/compliance-integrators.md in the repository; the state payload's JSON Schema "
        "is served at /api/v1/compliance/schema/state.v1.json."
    ),
    "VERSION": "v1",
    "SERVE_INCLUDE_SCHEMA": False,
    # The API reference at /api/v1/compliance/docs uses the bundled Swagger UI (shared/apidocs.py).
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    # One name for the resource types (records.models.ResourceType's values), whichever field
    # lists them (changes, webhooks).
    "ENUM_NAME_OVERRIDES": {"ResourceTypeEnum": ["State", "EsaProgram", "Citation"]},
    # Error responses, the Bearer scheme and the rate-limit headers (compliance_site/api/schema.py).
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "compliance_site.api.schema.postprocess",
    ],
}

# The X-Poll-Interval of /changes: how long a poller waits between passes that found nothing
# new. Reindex publishes on a push, not on a clock; a minute is also the webhook sweep's period.
COMPLIANCE_POLL_INTERVAL_SECONDS = 60

# --- Background work ----------------------------------------------------------------------
# django-tasks with the database backend and its `db_worker` process (webhook deliveries).
TASKS = {
    "default": {
        "BACKEND": env_str("COMPLIANCE_TASKS_BACKEND", "django_tasks_db.DatabaseBackend"),
        "QUEUES": ["default"],
    }
}

# --- Data repository ----------------------------------------------------------------------
# The git repository of YAML files that `reindex` publishes.
COMPLIANCE_DATA_REPO = Path(env_str("COMPLIANCE_DATA_REPO", str(VAR_DIR / "compliance-data")))

# --- Access (API keys and rate limits, compliance_site.access) -------------------------------
# Requests per client IP without a valid key; a key's own limit is per minute, on its row
# (the contract's rate_limit_per_minute), with this default for new keys.
COMPLIANCE_ANONYMOUS_RATE_LIMIT = env_rate("COMPLIANCE_ANONYMOUS_RATE_LIMIT", "30/m")
COMPLIANCE_DEFAULT_KEY_RATE_PER_MINUTE = 60

# --- Source monitor (compliance_site.monitoring) --------------------------------------------
MONITOR_USER_AGENT = env_str(
    "MONITOR_USER_AGENT", "ComplianceSourceMonitor/1.0 (+https://compliance.example/about)"
)
MONITOR_TIMEOUT_SECONDS = env_int("MONITOR_TIMEOUT_SECONDS", 15)
MONITOR_MAX_BYTES = env_int("MONITOR_MAX_BYTES", 5 * 1024 * 1024)
# The longest HTML page the monitor reads, in characters (compliance_site/monitoring/normalize.py).
MONITOR_MAX_READ_CHARS = 300_000

# --- Webhooks (compliance_site.webhooks, docs/compliance-integrators.md) ---------------------
# A delivery succeeds on any 2xx within this many seconds.
COMPLIANCE_WEBHOOK_TIMEOUT_SECONDS = env_int("COMPLIANCE_WEBHOOK_TIMEOUT_SECONDS", 10)
# An endpoint whose deliveries have all failed for this long is disabled until its owner
# re-enables it.
COMPLIANCE_WEBHOOK_DISABLE_AFTER_HOURS = env_int("COMPLIANCE_WEBHOOK_DISABLE_AFTER_HOURS", 24)
COMPLIANCE_WEBHOOK_USER_AGENT = env_str(
    "COMPLIANCE_WEBHOOK_USER_AGENT", "ComplianceWebhooks/1.0 (+https://compliance.example/about)"
)
