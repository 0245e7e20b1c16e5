"""Tiny Tiny RSS (Debian bookworm's `tt-rss`) beside our service, for side-by-side figures.

Sets up, idempotently and without touching the system's own services: a PostgreSQL database of
its own (`ttrss_bench`), a private php-fpm (one pool, unix socket) and a private nginx master
with a server block on a free loopback port, both with their files under /tmp/ttrss-bench.
docs/benchmarks-ttrss.md gives the steps by hand.

What the benchmarks call:
- `TtRss.available()`: whether tt-rss, php-fpm and nginx are installed (CI machines may lack
  them; the benchmarks then say "tt-rss not installed");
- `TtRss().setup()`, `.stop()`;
- `.feeds_replace(urls)` and `.update()`: the ingest passes, `php update.php --feeds` as the
  www-data user, timed with its peak RSS (benchmarks/news_ingest_bench.py);
- `.headlines_load(seconds=20, connections=8)`: wrk against the API's `getHeadlines` (limit
  50, excerpts, a logged-in session bound to the User-Agent the load sends), requests/s and
  p99 (the #14 API comparison); every answer under load is checked to hold 50 headlines.

tt-rss fetches only from ports 80/443 and refuses loopback hosts (UrlHelper::validate), so the
feeds it reads must be served on port 80 of a non-loopback address of this machine:
`feed_address()` gives one.

Usage: python benchmarks/ttrss.py setup|stop|status|headlines
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psycopg

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from benchmarks.loadgen import CHECKED_TOTALS, LoadResult, wrk  # noqa: E402
from benchmarks.measured import PassResult, run_measured  # noqa: E402

PG = os.environ.get("BENCH_PG_URL", "postgres://postgres@127.0.0.1:5432")
WWW = Path("/usr/share/tt-rss/www")
SCHEMA = Path("/usr/share/tt-rss/schema/ttrss_schema_pgsql.sql")
PHP_FPM = "/usr/sbin/php-fpm8.2"
PHP = "/usr/bin/php"
NGINX = "/usr/sbin/nginx"
DATABASE_PHP = Path("/etc/tt-rss/database.php")
CONFIG_PHP = Path("/etc/tt-rss/config.php")
USER = "www-data"
LOGIN, PASSWORD = "admin", "password"  # the account tt-rss's schema creates
# tt-rss binds a session to the User-Agent it logged in with: the login and every request of
# the load send this one (wrk sends none of its own, and a session used without it answers
# HTTP 200 with NOT_LOGGED_IN).
USER_AGENT = "ttrss-bench/1.0"
# wrk's Lua: every answer must be status 0 with 50 headlines (one "guid" each), counted per
# thread and summed when the run is done.
HEADLINES_CHECK = """
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) checked = 0; wrong = 0 end
function response(status, headers, body)
  checked = checked + 1
  local _, headlines = string.gsub(body, '"guid":', '')
  if status ~= 200 or headlines ~= 50 or not string.find(body, '"status":0', 1, true) then
    wrong = wrong + 1
  end
end
"""


def feed_address() -> str:
    """A non-loopback IPv4 address of this machine (tt-rss refuses 127.x and localhost)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        # No packet is sent: connecting a UDP socket only picks the outgoing interface.
        probe.connect(("192.0.2.1", 9))
        address = probe.getsockname()[0]
    if address.startswith("127."):
        raise RuntimeError("no non-loopback IPv4 address to serve tt-rss's feeds on")
    return address


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class TtRss:
    def __init__(
        self,
        *,
        database: str = "ttrss_bench",
        workdir: Path = Path("/tmp/ttrss-bench"),
    ) -> None:
        self.database = database
        self.workdir = workdir
        self.port_file = workdir / "port"
        self.www = workdir / "www"

    @staticmethod
    def available() -> bool:
        return all(Path(p).exists() for p in (WWW / "update.php", PHP_FPM, PHP, NGINX))

    @property
    def port(self) -> int:
        return int(self.port_file.read_text())

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    # Setup

    def setup(self) -> None:
        """Database, configuration, php-fpm and nginx; each step only when not done yet."""
        self.workdir.mkdir(parents=True, exist_ok=True)
        if not self.port_file.exists():
            self.port_file.write_text(str(_free_port()))
        self._database()
        self._configure()
        self._start_php_fpm()
        self._start_nginx()
        self._wait_ready()

    def _sql(self, database: str | None = None):
        return psycopg.connect(f"{PG}/{database or self.database}", autocommit=True)

    def _database(self) -> None:
        with self._sql("postgres") as conn:
            exists = conn.execute(
                "SELECT 1 FROM pg_database WHERE datname = %s", [self.database]
            ).fetchone()
            if not exists:
                conn.execute(f'CREATE DATABASE "{self.database}"')
        with self._sql() as conn:
            loaded = conn.execute("SELECT to_regclass('ttrss_version')").fetchone()[0]
            if not loaded:
                conn.execute(SCHEMA.read_text())
            # The preferences tt-rss would create at the first login in the browser; the
            # update query joins on DEFAULT_UPDATE_INTERVAL, and the API must be allowed.
            conn.execute(
                "INSERT INTO ttrss_user_prefs (owner_uid, pref_name, value) "
                "SELECT u.id, p.pref_name, p.def_value FROM ttrss_users u, ttrss_prefs p "
                "WHERE u.login = %s AND NOT EXISTS (SELECT 1 FROM ttrss_user_prefs x "
                "WHERE x.owner_uid = u.id AND x.pref_name = p.pref_name AND x.profile IS NULL)",
                [LOGIN],
            )
            conn.execute(
                "UPDATE ttrss_user_prefs SET value = 'true' WHERE pref_name = 'ENABLE_API_ACCESS'"
            )

    def _configure(self) -> None:
        # A private copy of the application with its own configuration (the package's reads
        # /etc/tt-rss, which one instance per machine would have to share): the ingest and the
        # API benchmarks each run one.
        if not (self.www / "update.php").exists():
            shutil.copytree(WWW, self.www, symlinks=True)
            # The package links its libraries relatively (lib/gettext -> ../../../php/...):
            # the copy's links point where the originals resolve.
            for link in [path for path in self.www.rglob("*") if path.is_symlink()]:
                target = (WWW / link.relative_to(self.www)).resolve()
                link.unlink()
                link.symlink_to(target)
        database = self.workdir / "database.php"
        database.write_text(
            "<?php\n"
            "$dbuser='postgres';\n$dbpass='';\n$basepath='';\n"
            f"$dbname='{self.database}';\n"
            "$dbserver='127.0.0.1';\n$dbport='5432';\n$dbtype='pgsql';\n"
        )
        lines = []
        for line in CONFIG_PHP.read_text().splitlines():
            if line.strip().startswith("define('SELF_URL_PATH'"):
                line = f"\tdefine('SELF_URL_PATH', '{self.base_url}/');"
            line = line.replace(str(DATABASE_PHP), str(database))
            lines.append(line)
        config = self.www / "config.php"
        config.unlink(missing_ok=True)
        config.write_text("\n".join(lines) + "\n")
        database.chmod(0o644)
        (self.workdir / "php-fpm.conf").write_text(
            "[global]\n"
            f"pid = {self.workdir}/php-fpm.pid\n"
            f"error_log = {self.workdir}/php-fpm.log\n"
            "daemonize = yes\n"
            "[ttrss]\n"
            f"user = {USER}\ngroup = {USER}\n"
            f"listen = {self.workdir}/php-fpm.sock\n"
            f"listen.owner = {USER}\nlisten.group = {USER}\n"
            # One child per core and a few spare: what Debian's pool gives a small server.
            "pm = static\npm.max_children = 4\n"
        )
        (self.workdir / "nginx.conf").write_text(
            f"user {USER};\n"
            f"pid {self.workdir}/nginx.pid;\n"
            f"error_log {self.workdir}/nginx-error.log;\n"
            "worker_processes 1;\n"
            "events { worker_connections 256; }\n"
            "http {\n"
            "  include /etc/nginx/mime.types;\n"
            "  access_log off;\n"
            f"  client_body_temp_path {self.workdir}/body;\n"
            f"  fastcgi_temp_path {self.workdir}/fastcgi;\n"
            f"  proxy_temp_path {self.workdir}/proxy;\n"
            f"  uwsgi_temp_path {self.workdir}/uwsgi;\n"
            f"  scgi_temp_path {self.workdir}/scgi;\n"
            "  server {\n"
            f"    listen 127.0.0.1:{self.port};\n"
            f"    root {self.www};\n"
            "    index index.php;\n"
            "    location ~ \\.php$ {\n"
            "      include /etc/nginx/fastcgi_params;\n"
            "      fastcgi_param SCRIPT_FILENAME $document_root$fastcgi_script_name;\n"
            f"      fastcgi_pass unix:{self.workdir}/php-fpm.sock;\n"
            "    }\n"
            "  }\n"
            "}\n"
        )

    def _running(self, name: str) -> int | None:
        pid_file = self.workdir / f"{name}.pid"
        if not pid_file.exists():
            return None
        pid = int(pid_file.read_text().strip() or 0)
        try:
            os.kill(pid, 0)
        except (ProcessLookupError, ValueError):
            return None
        return pid

    def _start_php_fpm(self) -> None:
        if self._running("php-fpm"):
            return
        subprocess.run([PHP_FPM, "--fpm-config", str(self.workdir / "php-fpm.conf")], check=True)

    def _start_nginx(self) -> None:
        if self._running("nginx"):
            subprocess.run(
                [NGINX, "-c", str(self.workdir / "nginx.conf"), "-s", "reload"], check=True
            )
            return
        subprocess.run([NGINX, "-c", str(self.workdir / "nginx.conf")], check=True)

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                answer = httpx.post(f"{self.base_url}/api/", json={"op": "getApiLevel"})
                if answer.status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.2)
        raise RuntimeError("tt-rss did not answer")

    def stop(self) -> None:
        for name in ("nginx", "php-fpm"):
            pid = self._running(name)
            if pid:
                os.kill(pid, signal.SIGTERM)

    # Ingest passes

    def feeds_replace(self, urls: list[str]) -> None:
        """Forget every feed and article; subscribe the admin account to `urls`."""
        with self._sql() as conn:
            conn.execute("DELETE FROM ttrss_feeds")
            conn.execute("DELETE FROM ttrss_entries")
            owner = conn.execute("SELECT id FROM ttrss_users WHERE login = %s", [LOGIN])
            owner_id = owner.fetchone()[0]
            with conn.cursor() as cursor:
                cursor.executemany(
                    "INSERT INTO ttrss_feeds (owner_uid, title, feed_url) VALUES (%s, %s, %s)",
                    [(owner_id, url.rsplit("/", 1)[-1], url) for url in urls],
                )
        for cached in (Path("/var/cache/tt-rss/feeds")).glob("*"):
            cached.unlink(missing_ok=True)

    def update(self) -> PassResult:
        """One `update.php --feeds` over every feed (made due first), timed."""
        with self._sql() as conn:
            # The update only takes feeds of users seen lately, and only feeds due by their
            # interval; the benchmark wants all of them now.
            conn.execute("UPDATE ttrss_users SET last_login = NOW() WHERE login = %s", [LOGIN])
            conn.execute("UPDATE ttrss_feeds SET last_updated = NULL, last_update_started = NULL")
        return run_measured(
            [PHP, "update.php", "--feeds", "--quiet"],
            user=USER,
            cwd=self.www,
        )

    def counts(self) -> dict[str, int]:
        with self._sql() as conn:
            entries = conn.execute("SELECT count(*) FROM ttrss_user_entries").fetchone()[0]
            errors = conn.execute(
                "SELECT count(*) FROM ttrss_feeds WHERE last_error != ''"
            ).fetchone()[0]
        return {"entries": entries, "feed_errors": errors}

    # API

    def session(self) -> str:
        answer = httpx.post(
            f"{self.base_url}/api/",
            json={"op": "login", "user": LOGIN, "password": PASSWORD},
            headers={"User-Agent": USER_AGENT},
        ).json()
        if answer.get("status") != 0:
            raise RuntimeError(f"tt-rss API login failed: {answer}")
        return answer["content"]["session_id"]

    def headlines_body(self, sid: str) -> bytes:
        return json.dumps(
            {
                "op": "getHeadlines",
                "sid": sid,
                "feed_id": -4,  # all articles
                "limit": 50,
                "show_excerpt": True,
                "view_mode": "all_articles",
            }
        ).encode()

    def headlines_check(self) -> int:
        """How many headlines one getHeadlines answers (50 when enough articles are stored)."""
        sid = self.session()
        answer = httpx.post(
            f"{self.base_url}/api/",
            content=self.headlines_body(sid),
            headers={"User-Agent": USER_AGENT},
        ).json()
        if answer.get("status") != 0:
            raise RuntimeError(f"getHeadlines failed: {answer}")
        return len(answer["content"])

    def headlines_load(
        self, *, seconds: float = 20, connections: int = 8, runs: int = 1
    ) -> LoadResult:
        """wrk: getHeadlines (limit 50, excerpts) with one logged-in session, every answer
        checked (LoadResult.checked and .wrong; a benchmark refuses figures with wrong ones)."""
        sid = self.session()
        result = wrk(
            f"{self.base_url}/api/",
            headers={"Content-Type": "application/json", "User-Agent": USER_AGENT},
            body=self.headlines_body(sid),
            seconds=seconds,
            connections=connections,
            runs=runs,
            check=HEADLINES_CHECK + CHECKED_TOTALS,
        )
        if not result.checked or result.wrong:
            raise RuntimeError(
                f"tt-rss getHeadlines under load: {result.wrong} of {result.checked} answers "
                "without their 50 headlines"
            )
        return result


def main() -> int:
    command = sys.argv[1] if len(sys.argv) > 1 else "status"
    ttrss = TtRss()
    if not TtRss.available():
        print("tt-rss not installed (apt-get install -y tt-rss php-fpm php-pgsql)")
        return 1
    if command == "setup":
        ttrss.setup()
        print(f"tt-rss at {ttrss.base_url}/ (API {ttrss.base_url}/api/)")
    elif command == "stop":
        ttrss.stop()
    elif command == "headlines":
        ttrss.setup()
        print(f"getHeadlines answers {ttrss.headlines_check()} headlines")
        result = ttrss.headlines_load()
        print(f"{result.requests_per_second:.0f} req/s, p99 {result.p99_ms:.1f} ms")
    else:
        print(json.dumps({"running": bool(ttrss._running("nginx")), **ttrss.counts()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
