"""The `.env` file `make run` writes (secret key, demo settings), read by every entry point.

`python -m news_site|compliance_site`, the WSGI and the ASGI applications call
`load_env_file()` before Django reads its settings, so operator commands work after `make run`
without exporting anything. Variables already in the environment win over the file, so a
deployment's own environment (systemd, containers) is never overridden. `ENV_FILE` names
another file; an empty `ENV_FILE` reads none (the test suite and `make run-prod` do that).
"""

import os
import sys
from pathlib import Path

from dotenv import load_dotenv

REPO_ROOT = Path(__file__).resolve().parent.parent


def env_file_path() -> Path | None:
    """The file to read: `ENV_FILE` when set (empty: none), else `.env` in the checkout."""
    chosen = os.environ.get("ENV_FILE")
    if chosen is None:
        return REPO_ROOT / ".env"
    return Path(chosen) if chosen.strip() else None


def load_env_file() -> None:
    path = env_file_path()
    if path is not None and path.is_file():
        load_dotenv(path, override=False)


def run_management(settings_module: str, program: str) -> None:
    """`manage.py` for one project: the env file, then a one-line error for a setting that
    cannot be read (no 60-line traceback for a missing SECRET_KEY), then the command."""
    load_env_file()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", settings_module)
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    try:
        settings.INSTALLED_APPS  # noqa: B018 - reading one setting loads them all
    except ImproperlyConfigured as exc:
        sys.exit(f"{program}: {exc}")
    execute_from_command_line([program, *sys.argv[1:]])
