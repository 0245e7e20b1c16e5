"""ASGI entry point of the news service: Django behind a per-process cache of public responses,
with the MCP tool server at /mcp, behind a bound on the requests the process serves at once,
all behind request ids, access lines and request metrics."""

import json
import os
import warnings

from django.core.asgi import get_asgi_application

from shared.envfile import load_env_file

# The `.env` of `make run` (when present) before Django reads its settings.
load_env_file()
# WhiteNoise answers static files (the quick start's admin CSS and JS; nginx serves them on a
# deployment) with a file iterator, which Django's ASGI handler reads in a thread and warns
# about on every file. Reading a small file in a thread is what we want.
warnings.filterwarnings(
    "ignore", message="StreamingHttpResponse must consume synchronous iterators", category=Warning
)
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "news_site.settings")
# Django must be set up before the tool server's modules import models.
django_application = get_asgi_application()

from django.conf import settings  # noqa: E402

from news_site.api.errors import error_body  # noqa: E402
from news_site.mcp.asgi import mcp_application  # noqa: E402
from news_site.responsecache import PublicResponseCache  # noqa: E402
from shared.concurrency import BUSY_MESSAGE, ConcurrencyLimit, Refusal  # noqa: E402
from shared.observability import ObservedASGI  # noqa: E402

# A busy /api/v1 answers in its own envelope; the other surfaces in plain text, as their
# database-outage 503 does.
_BUSY_V1 = Refusal(
    "/api/v1/",
    b"application/json",
    json.dumps(error_body("service_unavailable", BUSY_MESSAGE)).encode(),
)

# Outermost: every request gets its id, access line and latency, cache hits, /mcp and refusals
# included.
application = ObservedASGI(
    ConcurrencyLimit(
        mcp_application(
            fallback=PublicResponseCache(
                django_application,
                seconds=settings.NEWS_RESPONSE_CACHE_SECONDS,
                max_bytes=settings.NEWS_RESPONSE_CACHE_MAX_BYTES,
            )
        ),
        limit=settings.NEWS_MAX_CONCURRENT_REQUESTS,
        refusals=[_BUSY_V1],
    )
)
