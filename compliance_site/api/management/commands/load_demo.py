"""The quick start's data: the bundled sample repository reindexed, monitoring snapshots of
every source, and a demo API key.

The command lives in the api app because it puts every app to work (records, monitoring,
access); the apps below never import the ones above them.
"""

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.html import escape

from compliance_site.access.keys import api_key_create, api_key_kept
from compliance_site.access.models import ApiKey
from compliance_site.monitoring.models import FlagOrigin, ReviewFlag
from compliance_site.monitoring.services import (
    PageFetcher,
    flag_raise,
    monitor_sources,
    monitored_sources,
)
from compliance_site.records.demo import build_demo_repository
from shared.fetch import FetchResult, fetch

DEMO_KEY_NAME = "demo (quick start)"


class Command(BaseCommand):
    help = (
        "Build the illustrative sample data repository, reindex it, record monitoring "
        "snapshots of locally served stand-in pages and issue a demo key."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--api-key",
            default="",
            help="The demo key's value, kept across loads (the quick start's, from its env "
            "file); without it a fresh key is issued.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        # Keys are stored hashed: a given value is kept (an integrator's saved demo key keeps
        # working), otherwise a fresh key replaces the old demo key.
        raw_key = options["api_key"]
        if raw_key:
            try:
                kept = api_key_kept(name=DEMO_KEY_NAME, raw_key=raw_key)
            except ValueError as exc:
                raise CommandError(f"--api-key: {exc}") from exc
            ApiKey.objects.filter(name=DEMO_KEY_NAME).exclude(pk=kept.pk).delete()
        else:
            ApiKey.objects.filter(name=DEMO_KEY_NAME).delete()
            _key, raw_key = api_key_create(name=DEMO_KEY_NAME)

        repo_path = settings.COMPLIANCE_DATA_REPO
        head = build_demo_repository(repo_path)
        self.stdout.write(f"sample data repository at {repo_path} (head {head[:12]})")
        call_command("reindex", repo=str(repo_path), verbosity=options["verbosity"])
        with stand_in_pages() as fetcher:
            report = monitor_sources(fetcher=fetcher)
        self.stdout.write(
            f"monitoring snapshots of {report.fetched} stand-in source pages "
            f"({report.failed} failed)"
        )
        if not ReviewFlag.objects.filter(cleared_at__isnull=True).exists():
            flag_raise(
                state_abbreviation="OH",
                reason="Illustrative demo flag: the notice form page was redesigned.",
                origin=FlagOrigin.EDITOR,
                created_by="demo",
            )
        self.stdout.write("demo API key (send as 'Authorization: Bearer <key>'):")
        self.stdout.write(raw_key)


@contextmanager
def stand_in_pages() -> Iterator[PageFetcher]:
    """A fetcher that answers every monitored source URL from a page served on 127.0.0.1.

    The demo's source URLs name real government sites; the demo must work offline and never
    poll them, so each URL gets an illustrative page of its own, fetched over HTTP through the
    same guarded client, normaliser and recorder as a real run.
    """
    names = {url: f"{name} ({state})" for state, name, url in monitored_sources()}
    server = ThreadingHTTPServer(("127.0.0.1", 0), _page_handler(names))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"

    def fetcher(url: str) -> FetchResult:
        local = base + url.encode("utf-8").hex()
        return fetch(
            local,
            user_agent=settings.MONITOR_USER_AGENT,
            timeout=settings.MONITOR_TIMEOUT_SECONDS,
            max_bytes=settings.MONITOR_MAX_BYTES,
            allow_private=True,
        )

    try:
        yield fetcher
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def _page_handler(names: dict[str, str]) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            try:
                url = bytes.fromhex(unquote(self.path.lstrip("/"))).decode("utf-8")
            except ValueError:
                url = ""
            title = names.get(url)
            if title is None:
                self.send_error(404)
                return
            body = (
                f"<!doctype html><html><head><title>{escape(title)}</title></head><body>"
                f"<h1>{escape(title)}</h1><p>Illustrative stand-in for {escape(url)}; "
                "the demo never fetches the real page.</p></body></html>"
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # the command prints its own summary

    return Handler
