"""The README and docs/ promise only what the repository has: every relative link points at an
existing file (and heading, for `#anchors`), and every repository path named in a command block
exists. Pages other work adds later (named in PLANNED) may be linked before they land."""

import re
import tempfile
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

# What the docs promise does not depend on a database: checked once, in the embedded run.
pytestmark = pytest.mark.embedded_only

PAGES = [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md"))]
# Linked from the index, written alongside this work; a link to them is allowed to dangle until
# they are merged, and must resolve once they exist.
PLANNED = {
    "architecture.md",
    "compliance-data-faults.md",
    "auth-and-limits.md",
    "operators-capacity.md",
}
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)
# Tokens in command blocks that name a file of the repository: a path under one of its folders,
# or a top-level file.
TRACKED_DIRS = (
    "news_site/",
    "compliance_site/",
    "shared/",
    "scripts/",
    "deploy/",
    "benchmarks/",
    "docs/",
    "tests/",
    ".ci/",
)
_DIRS = "|".join(re.escape(d) for d in TRACKED_DIRS)
TOKEN = re.compile(rf"(?<![\w/.:-])((?:{_DIRS})[\w./<>*-]*|Makefile|pyproject\.toml)")


def _anchors(page: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    anchors = set()
    for heading in re.findall(r"^#+ (.+)$", FENCE.sub("", page.read_text(encoding="utf-8")), re.M):
        anchor = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        anchors.add(anchor)
    return anchors


def test_the_pages_exist() -> None:
    names = {page.name for page in PAGES}
    for required in (
        "mobile-api.md",
        "agents-and-mcp.md",
        "editors.md",
        "compliance-integrators.md",
        "operators.md",
        "decisions.md",
    ):
        assert required in names
    assert len((REPO_ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 200


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_relative_links_resolve(page: Path) -> None:
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    links = LINK.findall(text)
    checked = 0
    for link in links:
        if re.match(r"^[a-z]+:", link):
            continue  # http(s), mailto: not this test's business
        path_part, _, anchor = link.partition("#")
        target = (page.parent / path_part).resolve() if path_part else page
        if not target.exists() and target.name in PLANNED:
            continue
        assert target.exists(), f"{page.name}: link to missing {link}"
        assert REPO_ROOT in target.parents or target == REPO_ROOT, f"{page.name}: {link} leaves"
        if anchor and target.suffix == ".md":
            assert anchor in _anchors(target), f"{page.name}: no heading #{anchor} in {target.name}"
        checked += 1
    if page.name == "README.md":
        assert checked >= 10


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_command_blocks_name_existing_files(page: Path) -> None:
    for block in FENCE.findall(page.read_text(encoding="utf-8")):
        for token in TOKEN.findall(block):
            token = token.rstrip(".,:;)")
            if any(mark in token for mark in "<>*"):
                # A pattern: its fixed folder part must exist.
                token = re.split(r"[<>*]", token)[0].rsplit("/", 1)[0]
            assert (REPO_ROOT / token).exists(), f"{page.name}: command block names {token}"


def test_nothing_outside_the_repository_is_referenced() -> None:
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        assert "../shared" not in text, page.name
        # No absolute path of the machine the docs were written on: the checkout's folder, or
        # the one it sits in unless that is the temporary folder, whose fixed names (the
        # benchmarks' scratch instances) the docs may give.
        assert str(REPO_ROOT) not in text, page.name
        if REPO_ROOT.parent != Path(tempfile.gettempdir()):
            assert str(REPO_ROOT.parent) not in text, page.name


def test_the_checker_sees_a_missing_file(tmp_path: Path) -> None:
    # The patterns above must match what they are meant to: a broken link and a made-up path.
    page = "See [x](missing.md).\n```sh\nbash scripts/no_such_script.sh\n```\n"
    assert LINK.findall(FENCE.sub("", page)) == ["missing.md"]
    assert TOKEN.findall(FENCE.findall(page)[0]) == ["scripts/no_such_script.sh"]
