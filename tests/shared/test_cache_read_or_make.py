"""shared.cache.value_read_or_make: a missing value is made once per process however many
threads ask for it at once, and a make that fails leaves nothing kept. value_read_or_refresh:
an old value is answered while one background thread makes it again, and with a shared cache a
value one process made is read, not made, by the others."""

import threading
import time
import zoneinfo

import pytest
from django.conf import settings
from django.core.cache import caches
from django.test import override_settings
from django.urls import get_script_prefix, set_script_prefix
from django.utils import timezone, translation

from shared import cache as shared_cache

THREADS = 8


@pytest.fixture(autouse=True)
def _pages_cache():
    """A process-local cache named `pages`, as the news service keeps its pages in (this suite
    also runs under the compliance settings)."""
    local = {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "read-or-make"}
    # What every process reads (Redis in production); a cache of its own here.
    shared = {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "everyone"}
    with override_settings(CACHES={**settings.CACHES, "pages": local, "everyone": shared}):
        caches["pages"].clear()
        caches["everyone"].clear()
        yield


def _ask_at_once(key: str, make, read=None) -> list:
    """`THREADS` threads asking for `key` at the same moment (through `read`, value_read_or_make
    by default); what each one got."""
    start = threading.Barrier(THREADS)
    answers: list = [None] * THREADS
    read = read or (lambda: shared_cache.value_read_or_make(key, make, 60, alias="pages"))

    def ask(index: int) -> None:
        start.wait()
        answers[index] = read()

    threads = [threading.Thread(target=ask, args=(index,)) for index in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    return answers


def test_threads_asking_for_a_missing_value_at_once_make_it_once():
    calls = []

    def make() -> bytes:
        calls.append(threading.get_ident())
        time.sleep(0.05)  # long enough for every other thread to arrive while it is made
        return b"page"

    answers = _ask_at_once("page:1", make)

    assert answers == [b"page"] * THREADS
    assert len(calls) == 1
    assert caches["pages"].get("page:1") == b"page"


def test_a_kept_value_is_not_made_again():
    caches["pages"].set("page:kept", b"kept", 60)

    def make() -> bytes:
        raise AssertionError("a kept value was made again")

    assert _ask_at_once("page:kept", make) == [b"kept"] * THREADS


def test_a_make_that_fails_reaches_its_caller_and_keeps_nothing():
    def broken() -> bytes:
        raise RuntimeError("the database went away")

    with pytest.raises(RuntimeError, match="went away"):
        shared_cache.value_read_or_make("page:2", broken, 60, alias="pages")
    assert caches["pages"].get("page:2") is None
    # The lock was released: the next caller makes the value.
    assert shared_cache.value_read_or_make("page:2", lambda: b"made", 60, alias="pages") == b"made"


def test_different_keys_are_each_made():
    made = [
        shared_cache.value_read_or_make(f"page:{n}", lambda n=n: n, 60, alias="pages")
        for n in (1, 2)
    ]
    assert made == [1, 2]


def test_a_make_may_ask_for_other_values_from_many_threads():
    """A page's make asks for the counts it shows (another key). With locks shared between
    keys, a page whose key fell on the counts' lock waited for itself for ever."""
    caches["pages"].clear()

    def page(n: int) -> bytes:
        counts = shared_cache.value_read_or_make("counts", lambda: {"feed": n}, 60, alias="pages")
        return f"page {n} {sorted(counts)}".encode()

    answers: dict[int, bytes] = {}

    def ask_for_pages(first: int) -> None:
        for n in range(first, first + 100):
            answers[n] = shared_cache.value_read_or_make(
                f"page:{n}", lambda n=n: page(n), 60, alias="pages"
            )
            if n % 10 == 0:
                caches["pages"].delete("counts")

    threads = [
        threading.Thread(target=ask_for_pages, args=(i * 50,), daemon=True) for i in range(4)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert not any(thread.is_alive() for thread in threads), "a make waited for itself"
    assert len(answers) == 250  # four threads' overlapping ranges of pages 0-249
    assert all(answer.startswith(b"page ") for answer in answers.values())
    assert shared_cache._making == {}


def _kept_value(key: str, expected, *, within: float = 30.0):
    """Wait until the kept value of `key` is `expected` (a background make has to finish)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        kept = caches["pages"].get(key)
        if kept is not None and kept[0] == expected:
            return kept[0]
        time.sleep(0.01)
    return caches["pages"].get(key)


def _refresh_read(key: str, make):
    # Old at once (0 seconds), answered for a minute more while it is made again.
    return shared_cache.value_read_or_refresh(key, make, 0, stale_seconds=60, alias="pages")


def test_an_old_value_is_answered_while_one_background_thread_makes_it_again():
    release = threading.Event()
    calls: list[str] = []

    def make() -> int:
        calls.append(threading.current_thread().name)
        if len(calls) > 1:
            release.wait(30)
        return len(calls)

    # Missing: made by the caller, who waits for it.
    assert _refresh_read("page:old", make) == 1
    # Old: every thread gets it at once, while one background make (held here) runs.
    assert _ask_at_once("page:old", make, lambda: _refresh_read("page:old", make)) == [1] * THREADS
    assert len(calls) == 2
    assert calls[0] == threading.current_thread().name
    assert calls[1].startswith("cache-refresh")

    release.set()
    assert _kept_value("page:old", 2) == 2
    assert _refresh_read("page:old", make) == 2


def test_a_background_make_that_fails_leaves_the_old_value_and_is_tried_again():
    attempts: list[int] = []
    failed = threading.Event()

    def make() -> str:
        attempts.append(1)
        if len(attempts) == 2:
            failed.set()
            raise RuntimeError("the database went away")
        return f"made {len(attempts)}"

    assert _refresh_read("page:failing", make) == "made 1"
    assert failed.wait(30)
    # The failed make left the old value and let go of the key: the next read tries again.
    assert _kept_value("page:failing", "made 1") == "made 1"
    deadline = time.monotonic() + 30
    while "page:failing" in shared_cache._refreshing and time.monotonic() < deadline:
        time.sleep(0.01)
    assert _refresh_read("page:failing", make) == "made 1"
    assert _kept_value("page:failing", "made 3") == "made 3"


def test_a_background_make_runs_in_the_callers_language_time_zone_and_url_prefix():
    seen: list[tuple[str, str, str]] = []
    made = threading.Event()

    def make() -> int:
        zone = str(timezone.get_current_timezone())
        seen.append((translation.get_language(), zone, get_script_prefix()))
        if len(seen) > 1:
            made.set()
        return len(seen)

    set_script_prefix("/news/")
    try:
        with translation.override("fi"), timezone.override(zoneinfo.ZoneInfo("Europe/Helsinki")):
            _refresh_read("page:context", make)
    finally:
        set_script_prefix("/")
    assert made.wait(30)
    assert seen[1] == ("fi", "Europe/Helsinki", "/news/")


def _shared_read(key: str, make, seconds: int = 0):
    return shared_cache.value_read_or_refresh(
        key, make, seconds, stale_seconds=60, alias="pages", shared_alias="everyone"
    )


def _another_process() -> None:
    """What the next read sees when it comes to another process: its own pages are empty."""
    caches["pages"].clear()


def test_a_value_one_process_made_is_read_by_the_others_not_made_again():
    calls: list[int] = []

    def make() -> str:
        calls.append(1)
        return f"page {len(calls)}"

    assert _shared_read("page:shared", make, seconds=60) == "page 1"
    _another_process()
    assert (
        _ask_at_once("page:shared", make, lambda: _shared_read("page:shared", make, seconds=60))
        == ["page 1"] * THREADS
    )
    assert len(calls) == 1


def test_an_old_value_is_made_again_unless_another_process_already_did():
    calls: list[int] = []

    def make() -> str:
        calls.append(1)
        return f"page {len(calls)}"

    # Old at once: the background make finds only this old value shared, so it makes one.
    assert _shared_read("page:again", make) == "page 1"
    assert _kept_value("page:again", "page 2") == "page 2"
    assert caches["everyone"].get("page:again")[0] == "page 2"

    # Another process made it anew: this one's background make takes it instead of making.
    caches["everyone"].set("page:again", ("made elsewhere", time.time() + 60), 60)
    wait_until_refreshed = time.monotonic() + 30
    while "page:again" in shared_cache._refreshing and time.monotonic() < wait_until_refreshed:
        time.sleep(0.01)
    assert _shared_read("page:again", make) == "page 2"
    assert _kept_value("page:again", "made elsewhere") == "made elsewhere"
    assert len(calls) == 2


def test_a_shared_value_is_never_answered_older_than_its_seconds_and_stale_seconds():
    def make() -> str:
        return "made now"

    # Another process made it 70 seconds ago (fresh for 0, answerable for 60 more).
    caches["everyone"].set("page:late", ("too old", time.time() - 70), 300)
    assert _shared_read("page:late", make) == "made now"

    # This process took one late in its life; its own copy outlives what may be answered.
    caches["pages"].set("page:taken", ("taken late", time.time() - 61), 300)
    assert _shared_read("page:taken", make) == "made now"
