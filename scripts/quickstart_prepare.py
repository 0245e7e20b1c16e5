"""`make run`'s preparation of one service's database, in one process (a Django start costs
seconds; three commands cost three): its migrations with a count as they go, the demo data,
and the demo admin account with the username and password of the env file.

    python scripts/quickstart_prepare.py news_site|compliance_site [--key-file PATH]

Every line it prints names the service (scripts/quickstart.sh runs both side by side). The
compliance demo's fresh API key goes to the key file (mode 0600), never to the terminal.
"""

import argparse
import contextlib
import io
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from shared.envfile import load_env_file

PROJECTS = ("news_site", "compliance_site")


class MigrationCount(io.TextIOBase):
    """migrate's output, reduced to a line per ten migrations applied."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.applied = 0

    def write(self, text: str) -> int:
        for _ in range(text.count("  Applying ")):
            self.applied += 1
            if self.applied % 10 == 0:
                say(self.name, f"{self.applied} migrations applied...")
        return len(text)


def say(name: str, line: str, *, head: str = "   ") -> None:
    # One write per line: the other service's lines go to the same terminal meanwhile.
    sys.stdout.write(f"{head} {name}: {line}\n")
    sys.stdout.flush()


def prepare(project: str) -> str | None:
    """Returns the compliance demo's API key (None for news)."""
    import django
    from django.core.management import call_command

    name = project.removesuffix("_site")
    django.setup()
    if project == "news_site":
        # The admin's Swedish catalogue: the .mo is build output, compiled from the .po in git.
        call_command("compile_catalogues", verbosity=0)
    count = MigrationCount(name)
    call_command("migrate", interactive=False, verbosity=1, stdout=count)
    say(name, f"{count.applied} migrations applied" if count.applied else "migrations up to date")

    say(name, "loading the demo data", head="==>")
    out = io.StringIO()
    # Commands it calls (the compliance reindex) write to sys.stdout: their lines are named too.
    with contextlib.redirect_stdout(out):
        # The compliance demo key is the env file's, the same at every start (demo-only).
        compliance = project == "compliance_site"
        extra = {"api_key": os.environ["COMPLIANCE_DEMO_API_KEY"]} if compliance else {}
        call_command("load_demo", stdout=out, **extra)
    lines = out.getvalue().splitlines()
    # The compliance demo ends with a label and the key: the key is handed back, not shown here.
    key = lines[-1] if compliance else None
    for line in lines[:-2] if key else lines:
        say(name, line)

    from django.contrib.auth import get_user_model

    user, _ = get_user_model().objects.get_or_create(username=os.environ["DEMO_ADMIN_USERNAME"])
    user.is_staff = user.is_superuser = True
    # An address, so the editors' notices (a source paused) reach var/mail/ like login codes.
    user.email = user.email or f"{user.username}@localhost"
    user.set_password(os.environ["DEMO_ADMIN_PASSWORD"])
    user.save()
    say(name, f"demo admin account '{user.username}' ready")
    return key


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("project", choices=PROJECTS)
    parser.add_argument("--key-file", type=Path, help="where the compliance demo key goes")
    args = parser.parse_args()
    load_env_file()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", f"{args.project}.settings")
    say(args.project.removesuffix("_site"), "migrating its database", head="==>")
    key = prepare(args.project)
    if key and args.key_file:
        args.key_file.touch(mode=0o600)
        args.key_file.write_text(key + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
