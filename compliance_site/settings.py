"""Settings of the compliance data service, all from the environment (see README)."""

from pathlib import Path

from shared.env import env_int, env_str
from shared.settings_base import (
    AUDIENCE_MIDDLEWARE,
    DJANGO_APPS,
    OBSERVABILITY_MIDDLEWARE,
    SHARED_APPS,
    STATIC_MIDDLEWARE,
    VAR_DIR,
    base_settings,
)

globals().update(base_settings(project="compliance", db_env="COMPLIANCE_DATABASE_URL"))

INSTALLED_APPS = [
    *DJANGO_APPS,
    *SHARED_APPS,
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_ratelimit",
    "compliance_site.records",
    "compliance_site.monitoring",
    "compliance_site.access",
    "compliance_site.api",
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
ROOT_URLCONF = "compliance_site.urls"
WSGI_APPLICATION = "compliance_site.wsgi.application"

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
    # Error responses, the Bearer scheme and the rate-limit headers (compliance_site/api/schema.py).
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "compliance_site.api.schema.postprocess",
    ],
}

# The git repository of YAML files that `reindex` publishes.
COMPLIANCE_DATA_REPO = Path(env_str("COMPLIANCE_DATA_REPO", str(VAR_DIR / "compliance-data")))
# /metrics reports reindex results from the runs recorded in the database.
METRICS_COLLECTORS = ["compliance_site.records.metrics.ReindexCollector"]
COMPLIANCE_ANONYMOUS_RATE_PER_MINUTE = env_int("COMPLIANCE_ANONYMOUS_RATE_PER_MINUTE", 30)
COMPLIANCE_DEFAULT_KEY_RATE_PER_MINUTE = 60
COMPLIANCE_CURSOR_MAX_LENGTH = 512
MONITOR_USER_AGENT = env_str(
    "MONITOR_USER_AGENT", "ComplianceSourceMonitor/1.0 (+https://compliance.example/about)"
)
MONITOR_TIMEOUT_SECONDS = env_int("MONITOR_TIMEOUT_SECONDS", 15)
MONITOR_MAX_BYTES = env_int("MONITOR_MAX_BYTES", 5 * 1024 * 1024)
# The longest HTML page the monitor reads, in characters (compliance_site/monitoring/normalize.py).
MONITOR_MAX_READ_CHARS = 300_000
