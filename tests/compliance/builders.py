"""Builders for compliance tests: valid state documents and data repositories."""

import copy
import io
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import git
import yaml
from django.core.management import CommandError, call_command

EASTERN = timezone(timedelta(hours=-5))

STATE_NAMES = {"TX": "Texas", "CA": "California", "OH": "Ohio", "FL": "Florida", "NY": "New York"}


def state_payload(abbr: str, **overrides: Any) -> dict[str, Any]:
    """A valid state document; keyword arguments replace top-level keys (None removes one)."""
    payload: dict[str, Any] = {
        "abbreviation": abbr,
        "name": STATE_NAMES.get(abbr, f"State {abbr}"),
        "last_verified_at": "2025-12-15",
        "summary": f"Homeschooling in {STATE_NAMES.get(abbr, abbr)} is legal.",
        "notice": {
            "required": True,
            "description": "File a notice of intent.",
            "deadline": "30 days",
        },
        "sources": [
            {"name": f"{abbr} education code", "url": f"https://law.example/{abbr.lower()}"}
        ],
    }
    for key, value in overrides.items():
        if value is None:
            payload.pop(key, None)
        else:
            payload[key] = value
    return payload


ESA = {
    "program_name": "Education Freedom Accounts",
    "amount_cents": 1_000_000,
    "eligibility": "Every resident student eligible to attend a public school.",
    "url": "https://esa.example/",
}


def git_date(when: datetime) -> str:
    """git's internal date format, which keeps the commit's own offset."""
    minutes = int(when.utcoffset().total_seconds() // 60)
    sign = "-" if minutes < 0 else "+"
    hours, rest = divmod(abs(minutes), 60)
    return f"{int(when.timestamp())} {sign}{hours:02d}{rest:02d}"


class DataRepo:
    """A compliance data repository in a temporary folder, with a clock for commit dates."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.repo = git.Repo.init(path, initial_branch="main")
        self.clock = datetime(2026, 1, 5, 9, 0, tzinfo=EASTERN)

    def write(
        self,
        abbr: str,
        payload: dict | None = None,
        *,
        raw: str | None = None,
        name: str | None = None,
    ) -> None:
        target = self.path / "states" / (name or f"{abbr}.yaml")
        target.parent.mkdir(exist_ok=True)
        text = (
            raw
            if raw is not None
            else yaml.safe_dump(payload or state_payload(abbr), sort_keys=False)
        )
        target.write_text(text)
        self.repo.index.add([str(target.relative_to(self.path))])

    def delete(self, abbr: str) -> None:
        self.repo.index.remove([f"states/{abbr}.yaml"], working_tree=True)

    def rename(self, old: str, new: str) -> None:
        self.repo.git.mv(f"states/{old}", f"states/{new}")

    def commit(
        self,
        message: str = "Update records",
        *,
        author: str = "Ada Editor",
        trailer: str | None = None,
        when: datetime | None = None,
    ) -> str:
        if when is None:
            self.clock += timedelta(days=1)
            when = self.clock
        actor = git.Actor(author, f"{author.split()[0].lower()}@example.org")
        full_message = f"{message}\n\n{trailer}\n" if trailer else message
        stamp = git_date(when)
        commit = self.repo.index.commit(
            full_message, author=actor, committer=actor, author_date=stamp, commit_date=stamp
        )
        return commit.hexsha

    def seed(self, *abbrs: str, **overrides: Any) -> str:
        for abbr in abbrs:
            self.write(abbr, state_payload(abbr, **overrides))
        return self.commit("Seed records")

    def update(self, abbr: str, message: str = "Update", **overrides: Any) -> str:
        current = yaml.safe_load((self.path / "states" / f"{abbr}.yaml").read_text())
        current = {k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in current.items()}
        merged = copy.deepcopy(current)
        for key, value in overrides.items():
            if value is None:
                merged.pop(key, None)
            else:
                merged[key] = value
        self.write(abbr, merged)
        return self.commit(message)


# A page served as HTML by the tests' local server.
HTML = {"Content-Type": "text/html; charset=utf-8"}


def run_command(name: str, **options: Any) -> tuple[int, str, str]:
    """A management command's exit status, stdout and stderr (a CommandError is its status)."""
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command(name, stdout=out, stderr=err, **options)
    except CommandError as exc:
        return exc.returncode, out.getvalue(), err.getvalue() + str(exc)
    return 0, out.getvalue(), err.getvalue()
