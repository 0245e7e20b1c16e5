import datetime
import json
from pathlib import Path
from typing import Any

import git
import pytest
import yaml

from compliance_site.records.demo import (
    DEMO_DATA_DIR,
    ILLUSTRATIVE_HEADER,
    REVERIFY_MESSAGE,
    SEED_MESSAGE,
    build_demo_repository,
)
from compliance_site.records.documents import JURISDICTIONS, validator

HISTORY = yaml.safe_load((DEMO_DATA_DIR / "history.yaml").read_text(encoding="utf-8"))


def as_json(data: Any) -> Any:
    """The schema sees JSON, so the dates PyYAML parses become ISO strings."""
    return json.loads(json.dumps(data, default=datetime.date.isoformat))


def schema_errors(data: Any) -> list[str]:
    """Errors from the project's Draft 2020-12 validator of the locked schema, with formats."""
    return [
        f"{error.json_path}: {error.message}" for error in validator().iter_errors(as_json(data))
    ]


def states_at(commit: git.Commit) -> dict[str, Any]:
    return {
        Path(blob.path).stem: yaml.safe_load(blob.data_stream.read())
        for blob in (commit.tree / "states").blobs
    }


def test_there_is_one_file_for_each_state_and_dc() -> None:
    files = sorted((DEMO_DATA_DIR / "states").glob("*.yaml"))

    assert len(files) == 51
    assert {path.stem for path in files} == JURISDICTIONS


@pytest.mark.parametrize("abbreviation", sorted(JURISDICTIONS))
def test_each_state_file_is_marked_illustrative_and_validates(abbreviation: str) -> None:
    text = (DEMO_DATA_DIR / "states" / f"{abbreviation}.yaml").read_text(encoding="utf-8")
    data = yaml.safe_load(text)

    assert text.startswith(ILLUSTRATIVE_HEADER)
    assert data["abbreviation"] == abbreviation
    assert schema_errors(data) == []


def test_history_dates_strictly_increase_within_the_demo_year() -> None:
    dates = [item["date"] for item in HISTORY]

    assert dates == sorted(set(dates))
    assert datetime.date(2026, 1, 5) <= dates[0].date()
    assert dates[-1].date() <= datetime.date(2026, 11, 15)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The demo repository and its head, built once for the tests that only read it."""
    path = tmp_path_factory.mktemp("demo") / "repo"
    return path, build_demo_repository(path)


def test_repository_holds_the_seed_and_every_history_commit(built: tuple[Path, str]) -> None:
    path, head = built

    with git.Repo(path) as repo:
        commits = list(reversed(list(repo.iter_commits())))
        assert repo.head.commit.hexsha == head

    assert [commit.summary for commit in commits] == [
        SEED_MESSAGE,
        *(item["message"].splitlines()[0] for item in HISTORY),
        REVERIFY_MESSAGE,
    ]
    assert [commit.committed_datetime for commit in commits[1:-1]] == [
        item["date"] for item in HISTORY
    ]
    assert [commit.author.name for commit in commits[1:-1]] == [
        item["author_name"] for item in HISTORY
    ]
    assert any("Change-Source: llm_drafted" in commit.message for commit in commits)


def test_every_state_file_at_head_validates(built: tuple[Path, str]) -> None:
    path, _head = built

    with git.Repo(path) as repo:
        states = states_at(repo.head.commit)

    assert set(states) == JURISDICTIONS
    assert {abbreviation: schema_errors(data) for abbreviation, data in states.items()} == {
        abbreviation: [] for abbreviation in JURISDICTIONS
    }


def test_history_changes_at_least_one_esa_amount(built: tuple[Path, str]) -> None:
    path, _head = built

    with git.Repo(path) as repo:
        seed = states_at(next(repo.iter_commits(max_parents=0)))
        head = states_at(repo.head.commit)

    changed = {
        abbreviation
        for abbreviation, data in head.items()
        if "esa_program" in data and "esa_program" in seed[abbreviation]
        if data["esa_program"]["amount_cents"] != seed[abbreviation]["esa_program"]["amount_cents"]
    }
    assert changed


def test_building_again_returns_the_same_head_without_new_commits(tmp_path: Path) -> None:
    first = build_demo_repository(tmp_path / "repo")
    again = build_demo_repository(tmp_path / "repo")
    elsewhere = build_demo_repository(tmp_path / "elsewhere")

    with git.Repo(tmp_path / "repo") as repo:
        commit_count = len(list(repo.iter_commits()))

    assert again == first
    assert elsewhere == first
    assert commit_count == 2 + len(HISTORY)
