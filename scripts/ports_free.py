"""Refuses, in a second and before anything is installed or started, a port that another
program already listens on: `make run` calls it first (and scripts/quickstart.sh again).

    python3 scripts/ports_free.py NEWS_PORT=8000 COMPLIANCE_PORT=8001

Standard library only: it runs with the system's Python, before the virtualenv exists.
Exits 1 naming each taken port and the variable that moves it.
"""

import socket
import sys


def port_taken(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        # As gunicorn binds: a closed connection's TIME_WAIT does not count, a listener does.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return True
    return False


def main(arguments: list[str]) -> int:
    wanted = dict(argument.split("=", 1) for argument in arguments)
    taken = 0
    for variable, value in wanted.items():
        if not value.isdigit() or not 0 < int(value) < 65536:
            print(f"make run: {variable}={value!r} is not a port number", file=sys.stderr)
            taken += 1
        elif port_taken(int(value)):
            print(
                f"make run: port {value} is already in use (another program listens on "
                f"127.0.0.1:{value}). Stop it, or choose another port: make run {variable}=PORT",
                file=sys.stderr,
            )
            taken += 1
    return 1 if taken else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
