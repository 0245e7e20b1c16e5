"""WSGI entry point: the `.env` of `make run` (when present), then Django."""

import os

from django.core.wsgi import get_wsgi_application

from shared.envfile import load_env_file

load_env_file()
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "compliance_site.settings")

application = get_wsgi_application()

from shared.heap import heap_freeze  # noqa: E402

# What the application loaded stays for the life of the process.
heap_freeze()
