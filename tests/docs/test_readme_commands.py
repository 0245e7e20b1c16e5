"""The README's five-minute sections work as written: their shell commands run, in order, in
bash against the quick start as `make run` starts it (tests/browser/conftest.py), and every
`curl` among them gets a 2xx answer. A user fills in what the README asks them to (the login
code from the mail file, the token from the login answer); the quick start's own ports, `.env`
and `var/` stand in for the defaults. The MCP inspector (an interactive web page) is left out:
the MCP tests cover that surface."""

import os
import re
import subprocess
from pathlib import Path

import httpx
import pytest

# The quick start as `make run` starts it, shared by the tests of this module.
from tests.browser.conftest import QuickStart, quickstart  # noqa: F401
from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.embedded_only

SECTION = re.compile(r"^## (Five minutes as [^\n]*)\n(.*?)(?=^## )", re.S | re.M)
SHELL_BLOCK = re.compile(r"^```sh\n(.*?)^```", re.S | re.M)
# Every curl goes through this: the answer's body to stdout (pipes such as `| head` work as
# written), its status checked, a non-2xx recorded with the command.
CURL_CHECK = r"""
curl() {
  local body status
  body=$(mktemp)
  status=$(command curl -sS -o "$body" -w '%{http_code}' "$@") || status="no answer"
  cp "$body" "$LAST_BODY"
  echo "$status $*" >>"$CURL_LOG"
  cat "$body"
  rm -f "$body"
}
"""


def readme_sections() -> dict[str, str]:
    """Each five-minute section's shell commands, continuation lines joined."""
    text = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    return {
        title: "\n".join(SHELL_BLOCK.findall(body)).replace("\\\n", " ")
        for title, body in SECTION.findall(text)
    }


def as_run(script: str, quick: QuickStart) -> str:
    """The commands with the quick start's ports, files and what a user fills in."""
    news_port = quick.news.rsplit(":", 1)[1]
    compliance_port = quick.compliance.rsplit(":", 1)[1]
    lines = []
    for line in script.splitlines():
        if line.startswith("npx "):
            continue
        line = line.replace("127.0.0.1:8000", f"127.0.0.1:{news_port}")
        line = line.replace("127.0.0.1:8001", f"127.0.0.1:{compliance_port}")
        line = line.replace("var/", f"{quick.var_dir}/").replace(" .env", f" {quick.env_file}")
        if line.startswith("grep -h 'kod'"):
            # The user reads the six-digit code from the mail file.
            line = f"CODE=$({line.split('#')[0]} | grep -oE '[0-9]{{6}}' | tail -n 1)"
        # A single-quoted JSON body: the code goes in between quotes, as the user types it.
        line = line.replace('"code": "123456"', '"code": "\'"$CODE"\'"')
        if "<token>" in line:
            # The user copies the token from the login answer.
            lines.append(
                "TOKEN=$(.venv/bin/python -c 'import json, sys; "
                'print(json.load(open(sys.argv[1]))["data"]["token"])\' "$LAST_BODY")'
            )
            # In the README's single-quoted header: the token goes in between quotes.
            line = line.replace("<token>", "'\"$TOKEN\"'")
        lines.append(line)
    return "\n".join(lines)


def test_the_readme_has_the_five_minute_sections_with_commands() -> None:
    sections = readme_sections()
    assert len(sections) == 4, list(sections)
    assert sum(script.count("curl ") for script in sections.values()) >= 10


@pytest.mark.parametrize("title", sorted(readme_sections()))
def test_the_readme_commands_answer_2xx(title: str, quickstart: QuickStart, tmp_path: Path) -> None:  # noqa: F811
    script = readme_sections()[title]
    if not script:
        pytest.skip(f"{title}: no shell commands (the admin in a browser: tests/browser)")
    log, last = tmp_path / "curl.log", tmp_path / "last_body"
    log.touch()
    last.touch()
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.endswith("_DATABASE_URL")
        and key not in {"SECRET_KEY", "REDIS_URL", "DJANGO_SETTINGS_MODULE"}
    }
    env.update(
        ENV_FILE=str(quickstart.env_file),
        VAR_DIR=str(quickstart.var_dir),
        CURL_LOG=str(log),
        LAST_BODY=str(last),
    )
    ran = subprocess.run(
        ["bash", "-e", "-c", CURL_CHECK + as_run(script, quickstart)],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ran.returncode == 0, f"{title}:\n{ran.stdout[-2000:]}\n{ran.stderr[-2000:]}"
    calls = log.read_text().splitlines()
    assert len(calls) == script.count("curl "), calls
    failed = [call for call in calls if not re.match(r"2\d\d ", call)]
    assert not failed, f"{title}: non-2xx answers:\n" + "\n".join(failed)


def test_every_link_in_the_banner_opens(quickstart: QuickStart) -> None:  # noqa: F811
    """What the banner offers a new user to open answers, redirects (the admin's login page)
    followed; the demo key's curl line, which needs the key, is the integrator section's."""
    banner = quickstart.output().split("Quick start is running", 1)[1]
    links = {
        link.rstrip(".,")
        for line in banner.splitlines()
        if "Bearer" not in line
        for link in re.findall(r"http://127\.0\.0\.1:\d+/\S*", line)
    }
    assert len(links) >= 5, links
    with httpx.Client(follow_redirects=True, timeout=30) as client:
        answers = {link: client.get(link).status_code for link in links}
    assert all(200 <= status < 300 for status in answers.values()), answers
