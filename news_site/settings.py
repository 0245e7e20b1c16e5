"""Settings of the news aggregation service, all from the environment (see README-news.md)."""

from shared.env import env_bool, env_int, env_list, env_str
from shared.settings_base import base_settings

globals().update(base_settings(project="news", db_env="NEWS_DATABASE_URL"))

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.syndication",
    "django_tasks",
    "django_tasks_db",
    "news_site.news",
    "news_site.legacy",
    "news_site.agents",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    # Strong ETags and 304s for every public GET, so clients and nginx can revalidate cheaply.
    "django.middleware.http.ConditionalGetMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "news_site.urls"
WSGI_APPLICATION = "news_site.wsgi.application"
# `/entries/1.json/` is not an alias of `/entries/1.json`: unknown paths are plain 404s.
APPEND_SLASH = False

LANGUAGE_CODE = "sv"

# Background work runs on django-tasks with the database backend and its `db_worker` process.
TASKS = {
    "default": {
        "BACKEND": env_str("NEWS_TASKS_BACKEND", "django_tasks_db.DatabaseBackend"),
        "QUEUES": ["default"],
    }
}

# The service's public name, used in credits ("enligt <källa>, via <tjänsten>").
NEWS_SITE_NAME = env_str("NEWS_SITE_NAME", "Nyhetstjänsten")
# Public responses may be cached by clients and the nginx in front for this long.
NEWS_PUBLIC_CACHE_SECONDS = env_int("NEWS_PUBLIC_CACHE_SECONDS", 60)

# Feed fetching (every fetch goes through shared.fetch: SSRF rules, caps, deadlines).
NEWS_FETCH_USER_AGENT = env_str(
    "NEWS_FETCH_USER_AGENT", "NyhetstjanstenBot/1.0 (+https://news.example/om-tjansten)"
)
NEWS_FETCH_TIMEOUT_SECONDS = env_int("NEWS_FETCH_TIMEOUT_SECONDS", 15)
NEWS_FETCH_MAX_BYTES = env_int("NEWS_FETCH_MAX_BYTES", 5 * 1024 * 1024)
NEWS_FEED_MIN_INTERVAL_SECONDS = env_int("NEWS_FEED_MIN_INTERVAL_SECONDS", 10 * 60)
NEWS_FEED_MAX_INTERVAL_SECONDS = env_int("NEWS_FEED_MAX_INTERVAL_SECONDS", 24 * 3600)
NEWS_FEED_PAUSE_AFTER_DAYS = env_int("NEWS_FEED_PAUSE_AFTER_DAYS", 3)
# Article pages are read while summarising (full text for the model, og:image); never stored.
NEWS_FETCH_ARTICLE_PAGES = env_bool("NEWS_FETCH_ARTICLE_PAGES", True)

# Summaries: an OpenAI-compatible chat-completions endpoint. Empty base URL or model means
# offline: the extractive summariser fills the source-language summary only.
NEWS_LLM_BASE_URL = env_str("NEWS_LLM_BASE_URL")
NEWS_LLM_MODEL = env_str("NEWS_LLM_MODEL")
NEWS_LLM_API_KEY = env_str("NEWS_LLM_API_KEY")
NEWS_LLM_TIMEOUT_SECONDS = env_int("NEWS_LLM_TIMEOUT_SECONDS", 60)
NEWS_LLM_MAX_ATTEMPTS = env_int("NEWS_LLM_MAX_ATTEMPTS", 3)
NEWS_LLM_RETRY_BASE_SECONDS = float(env_str("NEWS_LLM_RETRY_BASE_SECONDS", "2"))
NEWS_LLM_MAX_CALLS_PER_RUN = env_int("NEWS_LLM_MAX_CALLS_PER_RUN", 200)
