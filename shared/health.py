"""Liveness and readiness probes both services mount at /healthz and /readyz.

Liveness says the process answers. Readiness checks what a request needs: the database and
the shared cache (rate limits count there). Both are plain JSON, outside the APIs' envelopes
and rate limits, and never cached.
"""

import logging
import time
from collections.abc import Callable

from django.core.cache import cache
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

logger = logging.getLogger(__name__)

# A check passes by returning (what it returns is not read) and fails by raising.
Check = Callable[[], object]


def database_check() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")


def cache_check() -> None:
    key = "health:probe"
    cache.set(key, "ok", 10)
    if cache.get(key) != "ok":
        raise RuntimeError("the cache did not return what was stored")


@never_cache
@require_safe
def liveness(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok"})


def readiness_view(
    checks: dict[str, Check], reports: dict[str, Callable[[], object]] | None = None
) -> Callable[[HttpRequest], JsonResponse]:
    """`checks` decide readiness; `reports` describe other parts (a background worker, say)
    that the web process can serve without, so they show in the body but do not fail it."""

    @never_cache
    @require_safe
    def readiness(request: HttpRequest) -> JsonResponse:
        results: dict[str, dict[str, object]] = {}
        for name, check in checks.items():
            started = time.perf_counter()
            try:
                check()
            except Exception as exc:
                logger.warning("readiness check %s failed: %s", name, exc)
                results[name] = {"ok": False, "error": type(exc).__name__}
            else:
                results[name] = {"ok": True}
            results[name]["ms"] = round((time.perf_counter() - started) * 1000, 1)
        ready = all(result["ok"] for result in results.values())
        body: dict[str, object] = {"status": "ok" if ready else "unavailable", "checks": results}
        for name, report in (reports or {}).items():
            try:
                body[name] = report()
            except Exception as exc:
                # A report reads the database too; while it is down the checks still answer.
                body[name] = {"ok": False, "error": type(exc).__name__}
        return JsonResponse(body, status=200 if ready else 503)

    return readiness
