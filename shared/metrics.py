"""Prometheus metrics of both services, served at `/metrics`.

Request metrics and rate-limit counters are kept in the process that serves the request. Under
gunicorn every worker keeps its own, so the gunicorn configs give the workers a shared directory
(`PROMETHEUS_MULTIPROC_DIR`, see shared/gunicorn_hooks.py) and a scrape of any one worker adds
up all of them. Results of the batch jobs (ingestion, reindex) run in other processes and on
other hosts; each project reports those from the database at scrape time, through the
collectors named in its METRICS_COLLECTORS setting.
"""

import ipaddress
import logging
import os
from collections.abc import Callable, Iterable
from functools import cached_property
from typing import Any

import prometheus_client
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import DatabaseError
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.utils.cache import add_never_cache_headers
from django.utils.module_loading import import_string
from prometheus_client import REGISTRY, CollectorRegistry, Counter, Histogram, Metric
from prometheus_client.multiprocess import MultiProcessCollector

from shared.http import client_ip
from shared.logs import current_request

logger = logging.getLogger(__name__)

METRICS_PATH = "/metrics"
UNMATCHED_ROUTE = "<unmatched>"
_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})

# `_created` series double every counter's output for a timestamp nobody graphs (and
# multi-process mode does not have them anyway).
prometheus_client.disable_created_metrics()

REQUEST_DURATION = Histogram(
    "http_request_duration_seconds",
    "Time from a request's arrival to the end of its response, by method, route and status.",
    ["method", "route", "status"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
RATE_LIMIT_REJECTIONS = Counter(
    "ratelimit_rejections",
    "Requests refused with 429 by a rate limit, by policy.",
    ["policy"],
)
RATE_LIMIT_UNCOUNTED = Counter(
    "ratelimit_uncounted",
    "Requests served without a rate limit because the shared cache was unreachable.",
    ["policy"],
)
RATE_LIMIT_DATABASE_COUNTED = Counter(
    "ratelimit_database_counted",
    "Authentication attempts counted in the database because the shared cache was unreachable.",
    ["policy"],
)


def request_observe(*, method: str, route: str, status: int, seconds: float) -> None:
    """One finished request. `route` is the URL pattern, never the raw path, so that the number
    of series stays bounded whatever paths clients send."""
    REQUEST_DURATION.labels(
        method=method if method in _METHODS else "other", route=route, status=str(status)
    ).observe(seconds)


class _ThisProcess:
    """The default registry of this process, for scrapes outside multi-process mode."""

    def collect(self) -> Iterable[Metric]:
        return REGISTRY.collect()


class _FromDatabase:
    """A collector that reads the database. While the database is down its metrics are left
    out, so that the scrape still reports the requests (the 503s of the outage among them)."""

    def __init__(self, collector: Any) -> None:
        self.collector = collector

    def collect(self) -> Iterable[Metric]:
        try:
            # Read it all before yielding anything: no half-reported collector.
            return list(self.collector.collect())
        except DatabaseError as exc:
            logger.warning("%s left out of /metrics: %s", type(self.collector).__name__, exc)
            return []


class MetricsMiddleware:
    """Answers `GET /metrics` ahead of the other middleware, so before the host check and the
    HTTPS redirect: Prometheus scrapes each app process directly, by address and over plain
    HTTP on the private side. Only clients in METRICS_ALLOWED_IPS get an answer; everyone else
    gets the service's ordinary 404 (nginx answers 404 for the path too)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        for entry in settings.METRICS_ALLOWED_IPS:
            try:
                ipaddress.ip_network(entry, strict=False)
            except ValueError as exc:
                raise ImproperlyConfigured(
                    f"METRICS_ALLOWED_IPS must list addresses or networks, got {entry!r}"
                ) from exc

    @cached_property
    def registry(self) -> CollectorRegistry:
        registry = CollectorRegistry()
        if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
            MultiProcessCollector(registry)
        else:
            registry.register(_ThisProcess())
        for path in settings.METRICS_COLLECTORS:
            registry.register(_FromDatabase(import_string(path)()))
        return registry

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.path != METRICS_PATH:
            return self.get_response(request)
        context = current_request()
        if context is not None:
            context.route = METRICS_PATH
        if not self._allowed(client_ip(request)):
            raise Http404
        if request.method not in ("GET", "HEAD"):
            return HttpResponseNotAllowed(["GET", "HEAD"])
        response = HttpResponse(
            prometheus_client.generate_latest(self.registry),
            content_type=prometheus_client.CONTENT_TYPE_LATEST,
        )
        add_never_cache_headers(response)
        return response

    @staticmethod
    def _allowed(address: str) -> bool:
        try:
            ip = ipaddress.ip_address(address)
        except ValueError:
            return False
        return any(
            ip in ipaddress.ip_network(entry, strict=False)
            for entry in settings.METRICS_ALLOWED_IPS
        )
