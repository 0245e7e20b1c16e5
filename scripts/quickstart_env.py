"""Write the quick start's generated settings into its env file (`.env` by default), once.

Values already in the file are kept (a developer's edits, the same secret key and demo
password and demo API key across restarts); missing ones are added. `--set NAME=VALUE`
replaces one value. Every `python -m news_site|compliance_site`
command and both applications read the file (shared/envfile.py).
"""

import argparse
import secrets
import sys
from pathlib import Path

from dotenv import dotenv_values, set_key


def defaults(var_dir: Path) -> dict[str, str]:
    return {
        "SECRET_KEY": secrets.token_urlsafe(50),
        # Plain HTTP on loopback: no HTTPS redirect, no Secure-only cookies.
        "SECURE_SSL_REDIRECT": "false",
        # 10.0.2.2 is the host as the Android emulator sees it.
        "ALLOWED_HOSTS": "127.0.0.1,localhost,10.0.2.2",
        # Email (login codes) goes to files: one per message, readable with cat.
        "EMAIL_BACKEND": "django.core.mail.backends.filebased.EmailBackend",
        "EMAIL_FILE_PATH": str(var_dir / "mail"),
        # Warnings and errors only in the terminal; LOG_LEVEL=INFO shows every request and task.
        "LOG_LEVEL": "WARNING",
        # Readable log lines in the terminal (deployments keep the default, JSON).
        "LOG_FORMAT": "text",
        # The demo account of both services' admin (a superuser; loopback only).
        "DEMO_ADMIN_USERNAME": "demo",
        "DEMO_ADMIN_PASSWORD": secrets.token_urlsafe(12),
        # The compliance demo's API key (demo-only: the quick start's own database), in the
        # format of compliance_site/access/keys.py; the demo loader keeps it across restarts,
        # so an integrator's saved key keeps working.
        "COMPLIANCE_DEMO_API_KEY": f"cdk_{secrets.token_hex(6)}_{secrets.token_urlsafe(32)}",
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("env_file", type=Path)
    parser.add_argument("--var-dir", type=Path, required=True)
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    args = parser.parse_args()
    args.env_file.touch(mode=0o600)
    present = dotenv_values(args.env_file)
    for name, value in defaults(args.var_dir.resolve()).items():
        if not present.get(name):
            set_key(args.env_file, name, value, quote_mode="never")
    for item in args.set:
        name, _, value = item.partition("=")
        set_key(args.env_file, name, value, quote_mode="never")
    return 0


if __name__ == "__main__":
    sys.exit(main())
