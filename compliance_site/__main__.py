"""`python -m compliance_site <command>`: the project's manage.py (reads `.env`, see
shared/envfile)."""

import sys

from shared.envfile import run_management


def main() -> None:
    run_management("compliance_site.settings", f"{sys.executable} -m compliance_site")


if __name__ == "__main__":
    main()
