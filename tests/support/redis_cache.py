"""A CACHES entry for a Redis at a given URL, shaped as the services configure theirs
(shared/settings_base.py: django-redis, one client per process), with the test's own timeouts."""

from typing import Any

from shared.cache_connection import cache_options


def redis_cache(url: str, *, timeout_seconds: float) -> dict[str, Any]:
    return {
        "BACKEND": "django_redis.cache.RedisCache",
        "LOCATION": url,
        "OPTIONS": {
            **cache_options(url),
            "SOCKET_CONNECT_TIMEOUT": timeout_seconds,
            "SOCKET_TIMEOUT": timeout_seconds,
        },
    }
