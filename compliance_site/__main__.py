"""`python -m compliance_site <command>`: the project's manage.py."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "compliance_site.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line([f"{sys.executable} -m compliance_site", *sys.argv[1:]])


if __name__ == "__main__":
    main()
