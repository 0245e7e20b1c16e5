"""An ingest run while Redis (the shared cache) is unreachable: feeds are fetched and entries
stored and summarised as usual; only story clustering, which needs the cross-host lock kept
there, waits for a run with Redis back."""

import io

import pytest
from django.core.management import call_command

from news_site.news.models import Entry, Story
from tests.conftest import free_port
from tests.support.redis_cache import redis_cache

pytestmark = pytest.mark.django_db


def ingest() -> str:
    out = io.StringIO()
    call_command("ingest", stdout=out)
    return out.getvalue()


def test_ingest_without_redis_stores_everything_and_clusters_later(
    server, private_fetching, make_feed, rss, settings
):
    settings.NEWS_EMBEDDING_MODEL = "off"
    settings.NEWS_FETCH_ARTICLE_PAGES = False
    items = [
        {"guid": str(n), "link": f"https://mac.example/{n}", "title": f"Apple släpper iPad {n}"}
        for n in range(3)
    ]
    server.respond("/feed.xml", body=rss(items))
    make_feed(url=server.url("/feed.xml"), language="sv")
    local_cache = settings.CACHES
    settings.CACHES = {
        **local_cache,
        # Nothing listens there.
        "default": redis_cache(f"redis://127.0.0.1:{free_port()}/0", timeout_seconds=1),
    }

    line = ingest()

    assert "3 new" in line
    assert Entry.objects.count() == 3
    assert not Story.objects.exists()

    settings.CACHES = local_cache
    ingest()

    assert not Entry.objects.filter(platform_relevant=True, story__isnull=True).exists()
    assert Story.objects.exists()
