"""Poison values in state files, through the real `reindex` command on a real git repository.

A character no store can hold (shared/untrusted_text.py: NUL, other controls, lone surrogates,
noncharacters, bidirectional overrides) anywhere in a state file, in a key or a value, at any
depth, refuses that file at that commit: the other files of the run are published, the run is
not a failure, and a later valid fix is published. Both backends publish the same payloads: each
run compares what it published with payloads computed without a database.
"""

import copy
import io
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.core.management import CommandError, call_command
from django.db import connection
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from compliance_site.records.documents import StateValidator, parse_state
from compliance_site.records.models import (
    ReindexOutcome,
    ReindexProblem,
    ReindexRun,
    Resource,
    ResourceType,
)
from shared.untrusted_text import UNPUBLISHABLE
from tests.compliance.builders import ESA, state_payload

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]

DEMO_PA = Path("compliance_site/records/demo_data/states/PA.yaml")


def rich_payload() -> dict[str, Any]:
    """A valid file using every part of the schema: nested objects, lists of objects, the ESA
    program and its URL, sources."""
    payload = parse_state("states/PA.yaml", DEMO_PA.read_bytes(), checker=StateValidator()).payload
    payload["esa_program"] = dict(ESA)
    payload["sources"] = [
        {"name": "Home education statute", "url": "https://law.example/pa/13-1327.1"},
        {"name": "Department guidance", "url": "https://education.example/pa/home"},
    ]
    return payload


def string_locations(value: Any, at: tuple = ()) -> list[tuple[tuple, str]]:
    """Every string of a document: ("key", path-to-the-mapping + key) for a mapping key,
    ("value", path) for a string value."""
    found: list[tuple[tuple, str]] = []
    if isinstance(value, dict):
        for key, item in value.items():
            found.append(((*at, key), "key"))
            found.extend(string_locations(item, (*at, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found.extend(string_locations(item, (*at, index)))
    elif isinstance(value, str):
        found.append((at, "value"))
    return found


RICH = rich_payload()
LOCATIONS = string_locations(RICH)


def _code_points(*ranges: tuple[int, int]) -> st.SearchStrategy[str]:
    return st.one_of(*(st.integers(low, high) for low, high in ranges)).map(chr)


POISON = st.one_of(
    st.just("\x00"),
    _code_points((0x01, 0x08), (0x0B, 0x0C), (0x0E, 0x1F), (0x7F, 0x9F)),  # C0, DEL, C1
    _code_points((0xD800, 0xDFFF)),  # lone surrogates
    _code_points((0xFDD0, 0xFDEF))
    | st.integers(0, 16)
    .flatmap(lambda plane: st.sampled_from([plane * 0x10000 + 0xFFFE, plane * 0x10000 + 0xFFFF]))
    .map(chr),  # noncharacters
    _code_points((0x202A, 0x202E), (0x2066, 0x2069)),  # bidi overrides and isolates
)


def poisoned(payload: dict, location: tuple, kind: str, poison: str, where: float) -> dict:
    document = copy.deepcopy(payload)
    *parents, last = location
    holder = document
    for part in parents:
        holder = holder[part]
    if kind == "key":
        text = str(last)
        cut = int(len(text) * where)
        renamed = text[:cut] + poison + text[cut:]
        # Same position in the mapping, so only the one character differs.
        items = [(renamed if k == last else k, v) for k, v in holder.items()]
        holder.clear()
        holder.update(items)
    else:
        text = holder[last]
        cut = int(len(text) * where)
        holder[last] = text[:cut] + poison + text[cut:]
    return document


def shown_location(location: tuple, kind: str, poison: str, where: float) -> str:
    """The YAML path a problem names, control characters escaped."""
    parts = [str(part) for part in location]
    if kind == "key":
        cut = int(len(parts[-1]) * where)
        parts[-1] = parts[-1][:cut] + poison + parts[-1][cut:]
    return "/".join(part.encode("unicode_escape").decode("ascii") for part in parts)


def write_state(repo, abbr: str, payload: dict) -> None:
    # Escaped (`"\x85"`, `"\u202E"`): written raw, U+0085 would be a YAML line break, and the
    # file would hold a newline, not the character.
    repo.write(abbr, raw=yaml.safe_dump(payload, sort_keys=False, allow_unicode=False))


def reindex_command() -> int:
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("reindex", stdout=out, stderr=err)
    except CommandError as exc:
        return exc.returncode
    return 0


def live_payload(key: str) -> Any:
    return Resource.objects.get(resource_type=ResourceType.STATE, resource_key=key).current.payload


@pytest.fixture
def seeded(data_repo):
    pa = dict(RICH, abbreviation="PA", name="Pennsylvania")
    write_state(data_repo, "PA", pa)
    write_state(data_repo, "CA", state_payload("CA"))
    data_repo.commit("Seed")
    assert reindex_command() == 0
    return data_repo


@given(
    spot=st.sampled_from(LOCATIONS),
    poison=POISON,
    where=st.floats(min_value=0, max_value=1),
)
@hypothesis_settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_a_poisoned_string_refuses_its_file_and_publishes_the_others(seeded, spot, poison, where):
    location, kind = spot
    step = ReindexRun.objects.count()  # each example's own, distinct, valid edits
    before = live_payload("PA")
    ca = state_payload("CA", summary=f"Edited beside a poisoned file, step {step}.")
    write_state(seeded, "CA", ca)
    write_state(seeded, "PA", poisoned(RICH, location, kind, poison, where))
    poisoned_sha = seeded.commit("Poison PA, edit CA")

    status = reindex_command()

    assert status == 1  # invalid files reported, the run itself went through
    assert ReindexRun.objects.latest("finished_at").outcome == ReindexOutcome.INVALID_FILES
    problem = ReindexProblem.objects.get(path="states/PA.yaml")
    assert problem.commit_sha == poisoned_sha
    assert not UNPUBLISHABLE.search(problem.message)
    if "invalid YAML" not in problem.message:  # YAML itself refuses some escapes (\uD800)
        assert f"states/PA.yaml: {shown_location(location, kind, poison, where)}: " in (
            problem.message
        )
        assert f"U+{ord(poison):04X}" in problem.message
    assert live_payload("PA") == before
    assert live_payload("CA") == ca

    fixed = dict(RICH, abbreviation="PA", name="Pennsylvania", summary=f"Fixed, step {step}.")
    write_state(seeded, "PA", fixed)
    seeded.commit("Fix PA")
    assert reindex_command() == 0
    assert live_payload("PA") == fixed
    assert not ReindexProblem.objects.exists()


def test_the_problem_names_the_yaml_path_of_a_poisoned_nested_key(seeded):
    document = poisoned(RICH, ("esa_program", "url"), "key", "\u202e", 0.5)
    write_state(seeded, "PA", document)
    sha = seeded.commit("Hide a bidi override in a nested key")

    assert reindex_command() == 1

    problem = ReindexProblem.objects.get(path="states/PA.yaml")
    assert problem.commit_sha == sha
    assert problem.message.startswith(
        "states/PA.yaml: esa_program/u\\u202erl: the key holds U+202E"
    )


@pytest.mark.parametrize(
    "text",
    [
        "abbreviation: CA\nname: Texas\nname: California\n",
        "abbreviation: CA\nnotice: {required: true, required: false}\n",
    ],
)
def test_a_duplicate_key_refuses_the_file(seeded, text):
    body = yaml.safe_dump(state_payload("CA", summary="Valid otherwise."), sort_keys=False)
    lines = [line for line in body.splitlines() if not line.startswith(("abbreviation", "name"))]
    seeded.write("CA", raw=text + "\n".join(lines) + "\n")
    sha = seeded.commit("Two equal keys")

    assert reindex_command() == 1

    problem = ReindexProblem.objects.get(path="states/CA.yaml")
    assert problem.commit_sha == sha
    assert "duplicate key" in problem.message
    assert live_payload("CA") == state_payload("CA")


@pytest.fixture
def database_refuses_a_name():
    """The database itself refuses one payload: a per-version error our checks do not
    foresee (a constraint added by an operator, a type the column cannot hold)."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                "ALTER TABLE records_resourceversion ADD CONSTRAINT test_refuse_name "
                "CHECK (payload->>'name' IS DISTINCT FROM 'Refused')"
            )
        else:
            cursor.execute(
                "CREATE TRIGGER test_refuse_name BEFORE INSERT ON records_resourceversion "
                "WHEN json_extract(NEW.payload, '$.name') = 'Refused' "
                "BEGIN SELECT RAISE(ABORT, 'refused by the test trigger'); END"
            )


def test_a_version_the_database_refuses_is_that_files_problem(seeded, database_refuses_a_name):
    write_state(seeded, "CA", state_payload("CA", name="Refused"))
    write_state(seeded, "TX", state_payload("TX"))
    refused_sha = seeded.commit("The database will refuse CA")
    write_state(seeded, "OH", state_payload("OH"))
    seeded.commit("Add OH")

    assert reindex_command() == 1

    problem = ReindexProblem.objects.get(path="states/CA.yaml")
    assert problem.commit_sha == refused_sha
    assert "the database refused this version" in problem.message
    assert live_payload("CA") == state_payload("CA")
    assert live_payload("TX") == state_payload("TX")
    assert live_payload("OH") == state_payload("OH")
    # The cursor moved on: a later valid fix is published.
    write_state(seeded, "CA", state_payload("CA", summary="Fixed."))
    seeded.commit("Fix CA")
    assert reindex_command() == 0
    assert live_payload("CA") == state_payload("CA", summary="Fixed.")
    ca_versions = Resource.objects.get(resource_type=ResourceType.STATE, resource_key="CA")
    assert ca_versions.current.version == 2  # no gap left by the refused version


# One of each class; the sweep below cycles through them over every string of the file.
ONE_OF_EACH = ["\x00", "\x1b", "\x85", "\ud800", "\ufdd0", "\U0010ffff", "\u202e", "\u2066"]


def test_every_string_of_a_file_poisoned_in_one_run_refuses_only_those_versions(
    seeded, run_reindex
):
    """One commit per string location of the rich file (every key and value, nested keys,
    source urls, ESA program fields), each beside a valid edit of CA; one reindex run."""
    poisoned_shas = {}
    for index, (location, kind) in enumerate(LOCATIONS):
        poison = ONE_OF_EACH[index % len(ONE_OF_EACH)]
        write_state(seeded, "PA", poisoned(RICH, location, kind, poison, 0.5))
        write_state(seeded, "CA", state_payload("CA", summary=f"Edit {index}."))
        poisoned_shas[seeded.commit(f"Poison {index}")] = (location, kind, poison)
    before = live_payload("PA")

    report = run_reindex()

    refused = [problem for problem in report.problems if problem.path == "states/PA.yaml"]
    assert {problem.commit_sha for problem in refused} == set(poisoned_shas)
    assert len(refused) == len(LOCATIONS)
    for problem in refused:
        location, kind, poison = poisoned_shas[problem.commit_sha]
        if "invalid YAML" not in problem.message:
            assert f"{shown_location(location, kind, poison, 0.5)}: " in problem.message
    assert live_payload("PA") == before
    ca = Resource.objects.get(resource_type=ResourceType.STATE, resource_key="CA").current
    assert ca.version == 1 + len(LOCATIONS)
    assert ca.payload == state_payload("CA", summary=f"Edit {len(LOCATIONS) - 1}.")
    assert ReindexRun.objects.latest("finished_at").outcome == ReindexOutcome.INVALID_FILES
