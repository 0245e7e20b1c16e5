"""Until a served worker's requests wait on a table lock the test holds: how long that takes on
a busy machine is no fixed pause, so the tests watch PostgreSQL for it."""

import time

import psycopg
import pytest

# Far past any start on a loaded machine; a wait that gets here is a failure, not a slow run.
_GIVE_UP_SECONDS = 60


def wait_until_waiting_on_locks(database_url: str, count: int) -> None:
    """Until at least `count` sessions of the database wait on a lock."""
    deadline = time.monotonic() + _GIVE_UP_SECONDS
    with psycopg.connect(database_url, autocommit=True) as watcher:
        while time.monotonic() < deadline:
            waiting = watcher.execute(
                "SELECT count(*) FROM pg_stat_activity"
                " WHERE datname = current_database() AND wait_event_type = 'Lock'"
            ).fetchone()
            if waiting and waiting[0] >= count:
                return
            time.sleep(0.05)
    pytest.fail(f"{count} request(s) never reached the table lock")
