"""Dates nobody can forge into the feed: backdated, future-dated, same-second and rebased commits
on a real git repository, published by `reindex` and read through the API by three clients:

- one that follows the contract's rule: remember the largest committed_at processed and send it
  as the next `since`;
- one that reads the feed newest first, following `next_cursor` until it meets an event it has;
- one that sends back `meta.sync_token`.

Each must receive every event `git log` says there is, and `as_of` answers for past days must
not change when backdated commits arrive.
"""

from datetime import UTC, date, datetime, timedelta, timezone

import pytest

from compliance_site.records.models import ReindexProblem, ResourceVersion
from tests.compliance.builders import state_payload

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]

STATES = ("TX", "CA", "OH", "FL", "NY")


def _events(api, **params) -> tuple[list[dict], dict]:
    """Every page of one query, following next_cursor; and the first page's meta."""
    events, cursor, first_meta = [], None, None
    while True:
        query = dict(params, limit=7, **({"cursor": cursor} if cursor else {}))
        response = api.get("/changes", params=query)
        assert response.status_code == 200, response.text
        body = response.json()
        first_meta = first_meta or body["meta"]
        events.extend(body["data"])
        cursor = body["meta"].get("next_cursor")
        if cursor is None:
            return events, first_meta


def _key(event: dict) -> tuple[str, str, int]:
    return (event["resource_type"], event["resource_key"], event["version"])


class SinceClient:
    """The contract's rule, literally."""

    def __init__(self) -> None:
        self.since: str | None = None
        self.seen: dict[tuple, dict] = {}

    def sync(self, api) -> None:
        events, _meta = _events(api, **({"since": self.since} if self.since else {}))
        for event in events:
            self.seen[_key(event)] = event
        if events:
            latest = max(events, key=lambda e: datetime.fromisoformat(e["committed_at"]))
            self.since = latest["committed_at"]


class CursorClient:
    """Newest first, page by page, until an event it already has."""

    def __init__(self) -> None:
        self.seen: dict[tuple, dict] = {}

    def sync(self, api) -> None:
        cursor = None
        while True:
            params = {"limit": 4, **({"cursor": cursor} if cursor else {})}
            body = api.get("/changes", params=params).json()
            fresh = [e for e in body["data"] if _key(e) not in self.seen]
            self.seen.update((_key(e), e) for e in fresh)
            cursor = body["meta"].get("next_cursor")
            if cursor is None or len(fresh) < len(body["data"]):
                return


class TokenClient:
    def __init__(self) -> None:
        self.token: str | None = None
        self.seen: dict[tuple, dict] = {}

    def sync(self, api) -> None:
        events, meta = _events(api, **({"sync_token": self.token} if self.token else {}))
        self.seen.update((_key(e), e) for e in events)
        self.token = meta["sync_token"]


def git_log_state_events(repo) -> set[tuple[str, str]]:
    """(short sha, state) for every state file each first-parent commit changed."""
    output = repo.repo.git.log("--first-parent", "--format=@%H", "--name-only", "--", "states/")
    found, sha = set(), ""
    for line in output.splitlines():
        if line.startswith("@"):
            sha = line[1:13]
        elif line.startswith("states/"):
            found.add((sha, line.removeprefix("states/").removesuffix(".yaml")))
    return found


def as_of_answers(api, days: list[date]) -> dict:
    return {
        (abbr, day): api.get(f"/states/{abbr}", params={"as_of": day.isoformat()}).content
        for abbr in STATES
        for day in days
    }


def edit(repo, abbr: str, label: str, when: datetime, **overrides) -> str:
    repo.write(abbr, state_payload(abbr, summary=f"{abbr}: {label}.", **overrides))
    return repo.commit(label, when=when)


def test_every_client_receives_every_event_whatever_dates_commits_carry(
    api, data_repo, run_reindex
):
    clients = [SinceClient(), CursorClient(), TokenClient()]
    now = datetime.now(UTC)
    eastern = timezone(timedelta(hours=-5))

    def publish_and_sync() -> None:
        report = run_reindex()
        assert not report.problems, report.problems
        for client in clients:
            client.sync(api)

    # History imported with its own dates.
    for abbr in STATES:
        data_repo.write(abbr, state_payload(abbr))
    data_repo.commit("Seed", when=datetime(2026, 1, 5, 9, 0, tzinfo=eastern))
    edit(data_repo, "TX", "January edit", datetime(2026, 1, 20, 9, 0, tzinfo=eastern))
    publish_and_sync()
    past_days = [date(2026, 1, 10), date(2026, 2, 1), (now - timedelta(days=1)).date()]
    answers_before = as_of_answers(api, past_days)

    # A commit dated 2099: published at the time of publication, not at the head of the feed
    # until 2099.
    edit(data_repo, "CA", "From the future", datetime(2099, 12, 31, tzinfo=UTC))
    publish_and_sync()
    future = ResourceVersion.objects.get(
        commit_sha=data_repo.repo.head.commit.hexsha, resource_type="State"
    )
    assert future.git_committed_at.year == 2099
    assert future.committed_at <= datetime.now(UTC)

    # Commits after it carry ordinary dates; a backdated one (a slow clock, a cherry-pick).
    edit(data_repo, "OH", "Ordinary", now - timedelta(minutes=5))
    edit(data_repo, "FL", "Backdated", datetime(2026, 1, 15, 12, 0, tzinfo=eastern))
    publish_and_sync()

    # Two commits in the same second.
    same_second = now - timedelta(minutes=1)
    edit(data_repo, "NY", "Same second, first", same_second)
    edit(data_repo, "TX", "Same second, second", same_second)
    publish_and_sync()

    with data_repo.repo.config_writer() as config:
        config.set_value("user", "name", "Ada Editor")
        config.set_value("user", "email", "ada@example.org")
    # A branch made in January, rebased onto main keeping its old dates, fast-forwarded.
    base = data_repo.repo.head.commit.hexsha
    data_repo.repo.git.checkout("-b", "feature", data_repo.repo.head.commit.parents[0].hexsha)
    edit(data_repo, "CA", "Rebased, first", datetime(2026, 1, 8, 9, 0, tzinfo=eastern))
    edit(data_repo, "OH", "Rebased, second", datetime(2026, 1, 9, 9, 0, tzinfo=eastern))
    data_repo.repo.git.rebase(base, "--committer-date-is-author-date")
    data_repo.repo.git.checkout("main")
    data_repo.repo.git.merge("--ff-only", "feature")
    rebased = data_repo.repo.head.commit
    assert rebased.committed_datetime.year == 2026 and rebased.committed_datetime.month == 1
    publish_and_sync()

    expected = git_log_state_events(data_repo)
    all_events = {
        (e.resource_type, e.resource_key, e.version)
        for e in ResourceVersion.objects.only("resource_type", "resource_key", "version")
    }
    for client in clients:
        received = {
            (e["git_sha"], e["resource_key"])
            for e in client.seen.values()
            if e["resource_type"] == "State"
        }
        assert received == expected, type(client).__name__
        assert set(client.seen) == all_events, type(client).__name__
    published = list(ResourceVersion.objects.order_by("sequence"))
    stamps = [version.committed_at for version in published]
    assert stamps == sorted(stamps)
    assert all(version.committed_at <= version.published_at for version in published)
    assert as_of_answers(api, past_days) == answers_before


def test_last_verified_at_is_measured_against_the_day_of_publication(data_repo, run_reindex):
    data_repo.write("TX", state_payload("TX"))
    data_repo.commit("Seed")
    run_reindex()
    data_repo.write("TX", state_payload("TX", last_verified_at="2099-01-01"))
    sha = data_repo.commit(
        "Verified in 2099, committed in 2099", when=datetime(2099, 1, 2, tzinfo=UTC)
    )

    report = run_reindex()

    [problem] = report.problems
    assert problem.commit_sha == sha
    assert "after the day of publication" in problem.message
    assert ReindexProblem.objects.filter(path="states/TX.yaml").exists()


@pytest.mark.parametrize("offset", ["-23:59", "+23:59", "+16:00", "-16:00"])
def test_since_with_any_valid_offset_answers(api, data_repo, run_reindex, offset):
    data_repo.write("TX", state_payload("TX"))
    data_repo.commit("Seed")
    run_reindex()

    response = api.get("/changes", params={"since": f"2026-01-01T00:00:00{offset}"})

    assert response.status_code == 200, response.text
    assert len(response.json()["data"]) == 2  # TX's state and citation
