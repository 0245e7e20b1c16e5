"""ASGI entry point of the news service. The stack, outermost first, one module each:

1. shared/observability.py `ObservedASGI`: every request's id, access line and metrics (cache
   hits, /mcp and refusals included).
2. shared/request_body.py `WholeBody`: the body read whole within NEWS_REQUEST_BODY_SECONDS,
   before the request takes any slot below.
3. shared/concurrency.py `ConcurrencyLimit`: at most NEWS_MAX_CONCURRENT_REQUESTS at once, a
   fast 503 past it (/readyz goes through it, so readiness fails when the slots are full).
4. news_site/router.py `PathRouter`: `/mcp` to the MCP tool server (news_site/mcp/asgi.py),
   every other path to
5. news_site/responsecache.py `PublicResponseCache`: kept copies of public pages, in front of
6. Django, as the WSGI application it is (every view and middleware of ours is synchronous),
   on a fixed pool of NEWS_WEB_THREADS threads (shared/wsgi_threads.py): one hand-over to a
   thread and one back per request. Django's own ASGI handler made four (request_started, the
   middleware, the view through async_to_sync, request_finished) on a new thread for every
   request; it cost about 2.4 ms of CPU per request, more than the rest of a request answered
   from memory. a2wsgi's bridge, used next, sent each part of a response back to the loop on
   its own (docs/api-performance.md).

Why one process with a router rather than the tool server as a process of its own:
docs/decisions.md, "The serving stack: one process, an explicit router"."""

import json
import os

from django.core.wsgi import get_wsgi_application

from shared.envfile import load_env_file

# The `.env` of `make run` (when present) before Django reads its settings.
load_env_file()
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "news_site.settings")
# Django must be set up before the tool server's modules import models.
django_wsgi = get_wsgi_application()

from django.conf import settings  # noqa: E402

from news_site.api.errors import error_body  # noqa: E402
from news_site.mcp.asgi import MCP_PATH, mcp_application  # noqa: E402
from news_site.responsecache import PublicResponseCache  # noqa: E402
from news_site.router import PathRouter  # noqa: E402
from shared.concurrency import BUSY_MESSAGE, ConcurrencyLimit, Refusal  # noqa: E402
from shared.heap import heap_freeze  # noqa: E402
from shared.observability import ObservedASGI  # noqa: E402
from shared.request_body import WholeBody  # noqa: E402
from shared.wsgi_threads import WsgiOnThreads  # noqa: E402

django_application = WsgiOnThreads(django_wsgi, threads=settings.NEWS_WEB_THREADS)

# A busy /api/v1 answers in its own envelope; the other surfaces in plain text, as their
# database-outage 503 does.
_BUSY_V1 = Refusal(
    "/api/v1/",
    b"application/json",
    json.dumps(error_body("service_unavailable", BUSY_MESSAGE)).encode(),
)

application = ObservedASGI(
    WholeBody(
        ConcurrencyLimit(
            PathRouter(
                mcp=mcp_application(),
                mcp_path=MCP_PATH,
                other=PublicResponseCache(
                    django_application,
                    seconds=settings.NEWS_RESPONSE_CACHE_SECONDS,
                    max_bytes=settings.NEWS_RESPONSE_CACHE_MAX_BYTES,
                ),
            ),
            limit=settings.NEWS_MAX_CONCURRENT_REQUESTS,
            refusals=[_BUSY_V1],
        ),
        max_bytes=settings.DATA_UPLOAD_MAX_MEMORY_SIZE,
        deadline_seconds=settings.NEWS_REQUEST_BODY_SECONDS,
    )
)

# Last: everything above stays for the life of the process.
heap_freeze()
