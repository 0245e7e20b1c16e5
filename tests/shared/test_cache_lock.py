"""shared.cache.lock_held: one holder at a time, and a holder whose lock lapsed never releases
the next holder's. Runs on Redis (redis-py's Lock) and on the embedded default's local-memory
cache; mark_once and an unreachable cache with them."""

import pytest
from django.core.cache import cache

from shared import cache as shared_cache
from tests.private_services import cache_on_stopped_redis

pytestmark = pytest.mark.every_backend

NAME = "tests:lock"


@pytest.fixture(autouse=True)
def _clean():
    cache.delete(NAME)
    yield
    cache.delete(NAME)


def test_a_second_holder_waits_until_the_first_lets_go():
    with (
        shared_cache.lock_held(NAME, seconds=60) as first,
        shared_cache.lock_held(NAME, seconds=60) as second,
    ):
        assert (first, second) == (True, False)
    with shared_cache.lock_held(NAME, seconds=60) as again:
        assert again is True


def test_a_lapsed_holder_leaves_the_next_holders_lock_alone():
    with shared_cache.lock_held(NAME, seconds=60) as held:
        assert held
        # The lock lapses (its time is up) and another run takes it.
        cache.delete(NAME)
        assert cache.add(NAME, "next run", 60)
    assert cache.get(NAME) == "next run"


def test_a_lock_another_holder_set_in_the_cache_is_respected():
    cache.add(NAME, "other run", 60)
    with shared_cache.lock_held(NAME, seconds=60) as held:
        assert held is False
    assert cache.get(NAME) == "other run"


def test_a_mark_is_set_once():
    key = "tests:mark"
    cache.delete(key)
    assert shared_cache.mark_once(key, 60) is True
    assert shared_cache.mark_once(key, 60) is False
    cache.delete(key)


def test_an_unreachable_cache_holds_no_lock_and_sets_no_mark(settings):
    cache_on_stopped_redis(settings)
    with shared_cache.lock_held(NAME, seconds=60) as held:
        assert held is False
    assert shared_cache.mark_once("tests:mark", 60) is None
