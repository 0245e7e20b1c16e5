"""A web worker loads the embedding model and the vector index before it serves anything, so
no request waits for them: the deployed gunicorn config does it in each worker before uvicorn
starts, and /readyz reports ready only once it is done."""

import httpx
import pytest
from django.conf import settings as django_settings

from news_site.search.services import entries_embed
from tests.conftest import database_url_for_subprocess
from tests.deployed import DeployedGunicorn

pytestmark = pytest.mark.django_db(transaction=True)

# One thread each for the model and the vector scan: two workers on two cores that spread
# their maths over every core made a search five times slower.
READY = "semantic search ready: model loaded, 2 vectors indexed, model on 1 thread(s), BLAS on 1"


def test_each_worker_loads_the_model_before_it_serves(tmp_path, make_feed, make_entry, semantic):
    feed = make_feed()
    watch = make_entry(
        feed,
        title="Apple Watch mäter blodtryck",
        summary_original="The watch warns about high blood pressure.",
    )
    make_entry(feed, title="iPad mini får OLED", summary_original="A brighter iPad screen.")
    assert entries_embed() == 2
    env = {
        "NEWS_DATABASE_URL": database_url_for_subprocess(django_settings.DATABASES["default"]),
        "SECRET_KEY": "test-secret",
        "SECURE_SSL_REDIRECT": "false",
        "NEWS_EMBEDDING_MODEL": "",
        "LOG_LEVEL": "INFO",
    }
    server = DeployedGunicorn("news", env, tmp_path, workers=2)
    try:
        # No request yet: both workers say they are ready to search before uvicorn starts.
        server.wait_for_lines("Application startup complete.", count=2, timeout=120)
        lines = server.log_entries()
        for pid in {line["pid"] for line in lines if line["message"] == READY}:
            mine = [line["message"] for line in lines if line["pid"] == pid]
            assert mine.index(READY) < mine.index("Application startup complete.")
        assert sum(line["message"] == READY for line in lines) == 2

        ready = httpx.get(f"{server.url}/readyz", timeout=10)
        found = httpx.get(
            f"{server.url}/api/v1/entries/search",
            params={"q": "blood pressure smartwatch"},
            timeout=10,
        ).json()
        loads = sum(line["message"] == READY for line in server.log_entries())
    finally:
        server.stop()
    assert ready.status_code == 200
    assert ready.json()["checks"]["search"]["ok"] is True
    assert found["meta"]["mode"] == "semantic"
    assert found["data"][0]["id"] == watch.pk
    # Loaded once per worker: neither the probe nor the search loaded it again.
    assert loads == 2
