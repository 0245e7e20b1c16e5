"""`python -m compliance_sync --base URL --key KEY --state FILE`: print each new event as one
JSON line (oldest first) and keep the checkpoint in FILE. The key may come from the
COMPLIANCE_API_KEY environment variable instead, which keeps it out of the process list.
SIGTERM or Ctrl-C between pages saves the checkpoint and exits; the next run resumes."""

import argparse
import json
import os
import signal
import sys
import time
from pathlib import Path

from compliance_sync.client import ApiError, ComplianceClient


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="compliance_sync", description=__doc__)
    parser.add_argument("--base", required=True, help="e.g. https://host/api/v1/compliance")
    parser.add_argument("--key", default=os.environ.get("COMPLIANCE_API_KEY"))
    parser.add_argument("--state", required=True, type=Path, help="the checkpoint file")
    parser.add_argument("--page-size", type=int, default=100, choices=range(1, 501), metavar="N")
    parser.add_argument(
        "--follow", type=float, metavar="SECONDS", help="sync again every SECONDS until stopped"
    )
    args = parser.parse_args(argv)
    if not args.key:
        parser.error("an API key is needed: --key or COMPLIANCE_API_KEY")

    stopping = False

    def request_stop(signum: int, frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)

    def emit(event: dict) -> None:
        sys.stdout.write(json.dumps(event, ensure_ascii=False) + "\n")
        sys.stdout.flush()

    with ComplianceClient(base_url=args.base, api_key=args.key, page_size=args.page_size) as api:
        try:
            while True:
                result = api.sync(args.state, emit=emit, stop=lambda: stopping)
                if stopping or not result.complete or args.follow is None:
                    return 0
                deadline = time.monotonic() + args.follow
                while not stopping and time.monotonic() < deadline:
                    time.sleep(min(1.0, deadline - time.monotonic()))
                if stopping:
                    return 0
        except ApiError as exc:
            print(f"compliance_sync: {exc}", file=sys.stderr)
            return 1


if __name__ == "__main__":
    sys.exit(main())
