"""shared/cache.py: Django's cache API against a real Redis, and "not cached" with a warning
when the cache cannot be reached."""

import logging
import uuid

from shared import cache
from tests.conftest import free_port, redis_url_or_skip


def redis_cache(url: str) -> dict:
    return {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": url,
            "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
        }
    }


def test_against_a_reachable_redis_it_is_the_cache_api(settings):
    settings.CACHES = redis_cache(redis_url_or_skip())
    key = f"test:cache-helper:{uuid.uuid4()}"

    assert cache.get(key, "absent") == "absent"
    assert cache.set(key, {"a": 1}, 30) is True
    assert cache.get(key) == {"a": 1}
    assert cache.delete(key) is True
    assert cache.get(key) is None
    assert cache.incr(key, seconds=30) == 1
    assert cache.incr(key, 5, seconds=30) == 6
    assert cache.delete(key) is True


def test_with_the_cache_unreachable_each_call_logs_and_carries_on(settings, caplog):
    settings.CACHES = redis_cache(f"redis://127.0.0.1:{free_port()}/0")

    with caplog.at_level(logging.WARNING, logger="shared.cache"):
        assert cache.get("k", "fallback") == "fallback"
        assert cache.set("k", 1, 30) is False
        assert cache.delete("k") is False
        assert cache.incr("k", seconds=30) is None

    operations = [record.getMessage().split()[1] for record in caplog.records]
    assert operations == ["get", "set", "delete", "incr"]
    assert all("unreachable" in record.getMessage() for record in caplog.records)


def test_another_alias_of_the_caches_setting(settings):
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.dummy.DummyCache"},
        "local": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "t"},
    }

    assert cache.incr("n", seconds=30, alias="local") == 1
    assert cache.incr("n", 2, seconds=30, alias="local") == 3
    assert cache.set("v", "x", 30, alias="local")
    assert cache.get("v", alias="local") == "x"
    assert cache.get("v") is None
