"""shared/cache.py: Django's cache API against a real Redis, and "not cached" with a warning
when the cache cannot be reached."""

import logging
import uuid

from shared import cache
from tests.conftest import free_port, redis_url_or_skip
from tests.support.redis_cache import redis_cache


def test_against_a_reachable_redis_it_is_the_cache_api(settings):
    settings.CACHES = {"default": redis_cache(redis_url_or_skip(), timeout_seconds=0.5)}
    key = f"test:cache-helper:{uuid.uuid4()}"

    assert cache.value_read(key, "absent") == "absent"
    assert cache.value_keep(key, {"a": 1}, 30) is True
    assert cache.value_read(key) == {"a": 1}
    assert cache.value_forget(key) is True
    assert cache.value_read(key) is None
    assert cache.counter_add(key, seconds=30) == 1
    assert cache.counter_add(key, 5, seconds=30) == 6
    assert cache.value_forget(key) is True


def test_with_the_cache_unreachable_each_call_logs_and_carries_on(settings, caplog):
    settings.CACHES = {
        "default": redis_cache(f"redis://127.0.0.1:{free_port()}/0", timeout_seconds=0.5)
    }

    with caplog.at_level(logging.WARNING, logger="shared.cache"):
        assert cache.value_read("k", "fallback") == "fallback"
        assert cache.value_keep("k", 1, 30) is False
        assert cache.value_forget("k") is False
        assert cache.counter_add("k", seconds=30) is None

    operations = [record.getMessage().split()[1] for record in caplog.records]
    assert operations == ["get", "set", "delete", "incr"]
    assert all("unreachable" in record.getMessage() for record in caplog.records)


def test_another_alias_of_the_caches_setting(settings):
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.dummy.DummyCache"},
        "local": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "t"},
    }

    assert cache.counter_add("n", seconds=30, alias="local") == 1
    assert cache.counter_add("n", 2, seconds=30, alias="local") == 3
    assert cache.value_keep("v", "x", 30, alias="local")
    assert cache.value_read("v", alias="local") == "x"
    assert cache.value_read("v") is None
