"""Hostile inputs, as a careless data contributor or a hostile government page would send them,
through the real `reindex` and `monitor_sources` commands (real git repositories, a local HTTP
server), on whichever database the suite runs on. After each: the exit status says what it
should, the other files and sources were processed, and the public endpoints still answer 200
with valid output.
"""

import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest
import yaml
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from compliance_site.monitoring.models import MonitoredSource, SourceSnapshot
from compliance_site.records.models import ReindexProblem, ResourceVersion
from tests.compliance.builders import HTML, DataRepo, run_command, state_payload

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]

EPOCH = 1_767_600_000  # 2026-01-05T08:00:00Z, after the builders' verification dates


def raw_commit(
    repo: DataRepo, *, message: bytes, author: bytes, timestamp: int | str, offset: str
) -> str:
    """A commit object written byte for byte (any message, any author, any offset), the way
    a buggy tool or `git hash-object --literally` can, on top of the staged index."""
    tree = repo.repo.index.write_tree().hexsha
    parent = repo.repo.head.commit.hexsha
    body = (
        f"tree {tree}\nparent {parent}\n".encode()
        + b"author "
        + author
        + b" <a@example.org> "
        + f"{timestamp} {offset}\n".encode()
        + b"committer "
        + author
        + b" <a@example.org> "
        + f"{timestamp} {offset}\n\n".encode()
        + message
    )
    sha = (
        subprocess.run(
            ["git", "hash-object", "-t", "commit", "--literally", "-w", "--stdin"],
            cwd=repo.path,
            input=body,
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .strip()
    )
    subprocess.run(["git", "update-ref", "HEAD", sha], cwd=repo.path, check=True)
    return sha


def nested(depth: int) -> str:
    return "summary: " + "[" * depth + "]" * depth + "\n"


ALIAS_BOMB = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 10)}]\n" for i in range(8)
)


@dataclass(frozen=True)
class HostileCommit:
    name: str
    # Changes TX in some hostile way; returns the commit SHA.
    make: Callable[[DataRepo], str]
    # Whether TX's file is invalid (exit 1, reported) or only the metadata is odd (exit 0).
    invalid: bool
    reason: str = ""


def _metadata(message: bytes, author: bytes, offset: str, timestamp: int | str = EPOCH):
    def make(repo: DataRepo) -> str:
        repo.write("TX", state_payload("TX", summary=f"Edited {offset}."))
        return raw_commit(repo, message=message, author=author, timestamp=timestamp, offset=offset)

    return make


def _file(text: str):
    def make(repo: DataRepo) -> str:
        repo.write("TX", raw=text)
        return repo.commit("A hostile file")

    return make


def _long_path(repo: DataRepo) -> str:
    repo.write("TX", state_payload("TX", summary="Edited beside a long path."))
    # "states/" and 250 characters: longer than any path column, still one file name.
    repo.write("TX", state_payload("TX"), name="T" * 245 + ".yaml")
    return repo.commit("A file with a very long name")


def _valid_yaml(**overrides) -> str:
    return yaml.safe_dump(state_payload("TX", **overrides), sort_keys=False)


HOSTILE_COMMITS = [
    HostileCommit("record separator in message", _metadata(b"a\x1eb\n", b"Ada", "+0000"), False),
    HostileCommit("unit separator in author", _metadata(b"m\n", b"A\x1fda", "+0000"), False),
    HostileCommit("NUL in message", _metadata(b"before\x00after\n", b"Ada", "+0000"), False),
    HostileCommit(
        "controls everywhere", _metadata(b"\x1b[31m\x7f\x85\n", b"\x01\x02", "-0000"), False
    ),
    HostileCommit("invalid UTF-8", _metadata(b"\xff\xfe\xc3\n", b"\xc3\x28", "+0100"), False),
    HostileCommit("offset +2400", _metadata(b"m\n", b"Ada", "+2400"), False),
    HostileCommit("offset -2530", _metadata(b"m\n", b"Ada", "-2530"), False),
    HostileCommit("offset +9999", _metadata(b"m\n", b"Ada", "+9999"), False),
    HostileCommit("offset with 99 minutes", _metadata(b"m\n", b"Ada", "+0199"), False),
    HostileCommit("offset of 7 digits", _metadata(b"m\n", b"Ada", "+1234567"), False),
    HostileCommit("long author", _metadata(b"m\n", b"A" * 5000, "+0000"), False),
    HostileCommit(
        "year 3 million", _metadata(b"m\n", b"Ada", "+0000", timestamp=99_999_999_999_999), False
    ),
    HostileCommit("path over 255 characters", _long_path, False),
    # Past MAX_DEPTH our own walk refuses it; past 1,000 a newer libyaml refuses it first.
    HostileCommit("YAML 40 deep", _file(nested(40)), True, "nested more than 32 levels"),
    HostileCommit("YAML 5,000 deep", _file(nested(5000)), True, "nested more than"),
    HostileCommit("YAML 100,000 deep", _file(nested(100_000)), True, "nested more than"),
    HostileCommit("YAML alias bomb", _file(ALIAS_BOMB), True, "aliases"),
    HostileCommit(
        "last_verified_at in 2099",
        _file(_valid_yaml(last_verified_at="2099-12-31")),
        True,
        "after the day of publication",
    ),
    HostileCommit(
        "20,000 unknown keys",
        _file(_valid_yaml() + "".join(f"extra_{i}: {i}\n" for i in range(20_000))),
        True,
        "Additional properties",
    ),
    HostileCommit(
        "oversized file",
        _file(_valid_yaml(summary="x") + "# " + "y" * 600_000 + "\n"),
        True,
        "the limit is",
    ),
]


def assert_public_surfaces_answer(client, api_key: str) -> None:
    auth = {"HTTP_AUTHORIZATION": f"Bearer {api_key}"}
    paths = [
        "/meta",
        "/states/CA",
        "/states/TX",
        "/states/TX/versions",
        "/states/CA/versions/1",
        "/esa_programs",
        "/changes?limit=500",
        "/citations/TX",
        "/review_flags",
    ]
    for path in paths:
        response = client.get(f"/api/v1/compliance{path}", **auth)
        assert response.status_code == 200, (path, response.content[:300])
        body = response.json()
        assert set(body) == {"data", "meta"}, path
    events = client.get("/api/v1/compliance/changes?limit=500", **auth).json()["data"]
    for event in events:
        committed_at = datetime.fromisoformat(event["committed_at"])
        assert committed_at.utcoffset() is not None
        assert "\x00" not in event["change_summary"] + event["committed_by"]
        assert len(event["committed_by"]) <= 255


@pytest.fixture
def repo(data_repo) -> DataRepo:
    data_repo.seed("TX", "CA")
    return data_repo


@pytest.mark.parametrize("hostile", HOSTILE_COMMITS, ids=lambda h: h.name)
def test_a_hostile_commit_is_reported_or_published_and_never_wedges_reindex(
    repo, hostile, client, api_key
):
    assert run_command("reindex")[0] == 0
    sha = hostile.make(repo)
    repo.write("CA", state_payload("CA", summary="Changed in the same run."))
    repo.commit("An ordinary edit after the hostile one")

    status, _out, err = run_command("reindex")

    if hostile.invalid:
        assert status == 1
        assert f"states/TX.yaml at {sha[:12]}" in err
        assert hostile.reason in err
        problem = ReindexProblem.objects.get(path="states/TX.yaml")
        assert problem.commit_sha == sha
        assert len(problem.message) <= 2000
        assert ResourceVersion.objects.filter(resource_key="TX").count() == 2  # seed only
    else:
        assert status == 0, err
        published = ResourceVersion.objects.get(resource_type="State", resource_key="TX", version=2)
        assert published.commit_sha == sha
    assert ResourceVersion.objects.filter(resource_type="State", resource_key="CA").count() == 2
    # The next run is not wedged: a later edit is published.
    repo.write("CA", state_payload("CA", summary="Published by the next run."))
    repo.commit("Another ordinary edit")
    status, _out, _err = run_command("reindex")
    assert status == (1 if hostile.invalid else 0)
    assert ResourceVersion.objects.filter(resource_type="State", resource_key="CA").count() == 3
    assert_public_surfaces_answer(client, api_key)


@pytest.mark.parametrize(
    ("offset", "shown"),
    [
        ("+2400", "+00:00"),
        ("-2530", "+00:00"),
        ("+0530", "+05:30"),
        ("-1159", "-11:59"),
        # Valid offsets that PostgreSQL's timestamptz input would refuse (over ±15:59).
        ("-2137", "-21:37"),
        ("+2359", "+23:59"),
    ],
)
def test_committed_at_is_the_true_instant_whatever_the_offset(repo, client, api_key, offset, shown):
    _metadata(b"m\n", b"Ada", offset)(repo)
    run_command("reindex")

    event = client.get(
        "/api/v1/compliance/states/TX/versions", HTTP_AUTHORIZATION=f"Bearer {api_key}"
    ).json()["data"][0]
    claimed = datetime.fromisoformat(event["git_committed_at"])

    assert claimed == datetime.fromtimestamp(EPOCH, UTC)
    assert event["git_committed_at"].endswith(shown)
    # Published no earlier than the seed before it (records/publishing.py), in the same offset.
    assert datetime.fromisoformat(event["committed_at"]) >= claimed
    assert event["committed_at"].endswith(shown)


@given(
    message=st.binary(max_size=200),
    author=st.binary(min_size=1, max_size=60).filter(lambda b: b"\n" not in b and b"<" not in b),
    sign=st.sampled_from("+-"),
    offset=st.integers(min_value=0, max_value=999_999),
    timestamp=st.integers(min_value=-(10**12), max_value=10**15),
)
@hypothesis_settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_any_commit_metadata_publishes_and_serves(
    repo, client, api_key, message, author, sign, offset, timestamp
):
    count = ResourceVersion.objects.filter(resource_type="State", resource_key="TX").count()
    repo.write("TX", state_payload("TX", summary=f"Edit {count}.", last_verified_at="1900-01-01"))
    sha = raw_commit(
        repo, message=message, author=author, timestamp=timestamp, offset=f"{sign}{offset:04d}"
    )

    status, _out, err = run_command("reindex")

    assert status == 0, err
    assert ResourceVersion.objects.filter(commit_sha=sha).exists()
    assert_public_surfaces_answer(client, api_key)


# Monitoring --------------------------------------------------------------------------------

HOSTILE_PAGES = {
    "/rot13": (b"<p>Notice within 30 days</p>", {"Content-Type": "text/html; charset=rot13"}),
    "/meta-base64": (b"<meta charset=base64><p>Notice</p>", {"Content-Type": "text/html"}),
    "/commas": (b"<p>" + b"1," * 40_000 + b"</p>", HTML),
    "/anchors": (b"<a " * 100_000, HTML),
    "/comments": (b"<!--" * 50_000, HTML),
    "/too-long": (b"<p>" + b"1," * 2_000_000 + b"</p>", HTML),
    "/broken": (b"down", {}),
}


@pytest.fixture
def hostile_sources(data_repo, local_server, settings):
    settings.FETCH_ALLOW_PRIVATE_NETWORKS = True
    settings.MONITOR_TIMEOUT_SECONDS = 5
    for path, (body, headers) in HOSTILE_PAGES.items():
        local_server.respond(
            path, body=body, headers=headers, status=503 if path == "/broken" else 200
        )
    local_server.respond("/good", body=b"<p>Parents file a notice.</p>", headers=HTML)
    long_url = local_server.url("/long?" + "q" * 2100)
    sources = [{"name": path, "url": local_server.url(path)} for path in HOSTILE_PAGES]
    data_repo.write(
        "TX", state_payload("TX", sources=[*sources, {"name": "long", "url": long_url}])
    )
    data_repo.write(
        "OH", state_payload("OH", sources=[{"name": "good", "url": local_server.url("/good")}])
    )
    data_repo.commit("Seed with hostile sources")
    assert run_command("reindex")[0] == 0
    return local_server


def test_monitor_sources_records_each_failing_source_and_goes_on(hostile_sources, client, api_key):
    status, out, err = run_command("monitor_sources")

    assert status == 0
    assert "9 fetched, 3 failed (1 http_503, 1 too_long_to_compare, 1 url_too_long)" in out
    good = SourceSnapshot.objects.get(url=hostile_sources.url("/good"))
    assert good.successful
    for path in ("/rot13", "/meta-base64", "/commas", "/anchors", "/comments"):
        assert SourceSnapshot.objects.get(url=hostile_sources.url(path)).successful, path
    long_source = MonitoredSource.objects.get(name="long")
    assert "2000" in long_source.last_error
    assert long_source.consecutive_failures == 1
    assert "url_too_long" not in SourceSnapshot.objects.values_list("error", flat=True)
    assert "the page answered HTTP 503" in MonitoredSource.objects.get(name="/broken").last_error
    too_long = MonitoredSource.objects.get(name="/too-long").last_error
    assert "the monitor reads up to 300000" in too_long
    assert "failed: TX" in err
    assert_public_surfaces_answer_for_monitoring(client, api_key)


def assert_public_surfaces_answer_for_monitoring(client, api_key: str) -> None:
    auth = {"HTTP_AUTHORIZATION": f"Bearer {api_key}"}
    for path in ("/citations/TX", "/citations/OH", "/review_flags", "/meta"):
        response = client.get(f"/api/v1/compliance{path}", **auth)
        assert response.status_code == 200, (path, response.content[:300])
        assert set(response.json()) == {"data", "meta"}


def test_a_source_that_keeps_failing_is_backed_off(hostile_sources):
    for _ in range(3):
        run_command("monitor_sources")
    broken = MonitoredSource.objects.get(name="/broken")
    assert broken.consecutive_failures == 3
    assert broken.next_attempt_at > datetime.now(UTC) + timedelta(days=6)
    hostile_sources.seen.clear()

    status, out, _err = run_command("monitor_sources")

    assert status == 0
    assert "3 backed off" in out  # the 503 page, the over-long page and the over-long URL
    assert hostile_sources.requests_to("/broken") == []
    assert hostile_sources.requests_to("/good") != []
