"""An ingest run never imports torch or transformers (the model runs under ONNX Runtime), and one
with nothing new does not load the model at all: the real `ingest` command, in its own process,
against a local feed that answers 304 the second time. The first run, which has entries to
embed, imports ONNX Runtime, so the check can tell the two apart."""

import os
import subprocess
import sys
from http.server import BaseHTTPRequestHandler

import pytest
from django.conf import settings as django_settings
from django.core.management import call_command
from django.utils import timezone

from news_site.news.models import Feed
from tests.conftest import COMMAND_BOUND_SECONDS, REPO_ROOT, database_url_for_subprocess

# The command's own process writes to the test database, so the rows must be committed.
pytestmark = pytest.mark.django_db(transaction=True)

ETAG = '"feed-v1"'


def _ingest(env: dict[str, str]) -> tuple[str, set[str]]:
    """Run `ingest`; its stdout and the top-level packages it imported (-X importtime)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "news_site", "ingest"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=COMMAND_BOUND_SECONDS,
        check=True,
    )
    imported = {
        line.rsplit("|", 1)[1].strip().split(".")[0]
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }
    return done.stdout, imported


def test_an_ingest_with_nothing_new_does_not_load_the_model(server, rss):
    pytest.importorskip("onnxruntime")
    body = rss(
        [
            {
                "guid": f"notorch-{n}",
                "link": f"https://source.example/{n}",
                "title": f"Apple släpper iOS 26.{n}",
                "description": f"Uppdateringen iOS 26.{n} rättar fel i iPhone.",
            }
            for n in range(3)
        ]
    )

    def feed(request: BaseHTTPRequestHandler) -> None:
        not_modified = request.headers.get("If-None-Match") == ETAG
        request.send_response(304 if not_modified else 200)
        request.send_header("ETag", ETAG)
        request.send_header("Content-Type", "application/rss+xml")
        request.send_header("Content-Length", "0" if not_modified else str(len(body)))
        request.end_headers()
        if not not_modified:
            request.wfile.write(body)

    server.route("/feed.xml", feed)
    call_command("add_feed", server.url("/feed.xml"), "--no-discover")
    # Each `ingest` starts a Python of its own (importtime sees only that process's imports)
    # on this test's database, with the local cache.
    env = {
        **os.environ,
        "NEWS_DATABASE_URL": database_url_for_subprocess(django_settings.DATABASES["default"]),
        "FETCH_ALLOW_PRIVATE_NETWORKS": "true",
        "NEWS_EMBEDDING_MODEL": "",
        "DJANGO_SETTINGS_MODULE": "news_site.settings",
    }
    env.pop("REDIS_URL", None)

    first, first_imports = _ingest(env)
    assert "3 new" in first
    assert "onnxruntime" in first_imports
    assert not {"torch", "transformers"} & first_imports

    # Due again at once: the run must fetch (a 304), find nothing and stop there.
    Feed.objects.update(next_check_at=timezone.now())
    second, second_imports = _ingest(env)
    assert "1 not modified" in second
    assert not {"onnxruntime", "tokenizers", "torch", "transformers"} & second_imports
    assert [s[1] for s in server.seen].count("/feed.xml") == 2
