"""`python -m shared.wait_ready URL`: until URL (a service's /readyz) answers 200.

The web units run it after gunicorn says it is up (ExecStartPost), so that `systemctl start` or
`restart` returns only once the workers serve through the same slots real requests take
(shared/health.py), and a deploy that cannot serve fails at the unit's TimeoutStartSec instead
of being reported started. The wait is on readiness alone; systemd bounds it.
"""

import os
import sys
import time
import urllib.error
import urllib.request

# Each probe's own bound: a readiness answer slower than this counts as not ready.
PROBE_SECONDS = 5


def probe_host() -> str | None:
    """A host name the service answers for: the first of ALLOWED_HOSTS (the unit's environment
    file sets it), as the loopback address the probe connects to is seldom one of them."""
    for name in os.environ.get("ALLOWED_HOSTS", "").split(","):
        name = name.strip().lstrip(".")
        if name and name != "*":
            return name
    return None


def ready(url: str) -> bool:
    host = probe_host()
    # main() accepts http:// URLs only.
    request = urllib.request.Request(url, headers={"Host": host} if host else {})  # noqa: S310
    try:
        with urllib.request.urlopen(request, timeout=PROBE_SECONDS) as response:  # noqa: S310
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def main(argv: list[str]) -> int:
    if len(argv) != 2 or not argv[1].startswith("http://"):
        print("usage: python -m shared.wait_ready http://HOST:PORT/readyz", file=sys.stderr)
        return 2
    while not ready(argv[1]):
        time.sleep(1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
