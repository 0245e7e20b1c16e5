"""Request ids, request metrics and rate-limit counts of the compliance service, in-process (the
Django middleware owns each request, as under gunicorn's sync workers; the deployed workers are
in test_deployed_observability.py)."""

import re

import pytest
from django.db import OperationalError

from compliance_site.records import selectors
from compliance_site.records.models import ReindexRun
from shared.observability import readable_route
from tests.prometheus import sample, scrape

pytestmark = pytest.mark.django_db

STATE_ROUTE = "/api/v1/compliance/states/<str:abbr>"


def test_every_response_carries_a_new_request_id(anonymous):
    first = anonymous.get("/meta")
    second = anonymous.get("/meta")

    assert re.fullmatch(r"[0-9a-f]{32}", first.headers["X-Request-ID"])
    assert first.headers["X-Request-ID"] != second.headers["X-Request-ID"]


def test_a_well_formed_request_id_from_the_proxy_is_kept(anonymous):
    response = anonymous.get("/meta", headers={"X-Request-ID": "4bf92f3577b34da6a3ce929d0e0e4736"})

    assert response.headers["X-Request-ID"] == "4bf92f3577b34da6a3ce929d0e0e4736"


def test_a_malformed_request_id_is_replaced(anonymous):
    response = anonymous.get("/meta", headers={"X-Request-ID": "<script>"})

    assert re.fullmatch(r"[0-9a-f]{32}", response.headers["X-Request-ID"])


def test_requests_are_counted_by_url_pattern_method_and_status(http, api):
    before = scrape(http)
    api.get("/states/TX")
    api.get("/states/CA")
    api.get("/states/ZZ")
    after = scrape(http)

    def counted(text: str, status: str) -> float:
        labels = {"method": "GET", "route": STATE_ROUTE, "status": status}
        return sample(text, "http_request_duration_seconds_count", **labels)

    assert counted(after, "404") - counted(before, "404") == 3
    assert "/states/TX" not in after


def test_requests_refused_before_routing_count_under_their_url_pattern(http, anonymous):
    before = scrape(http)
    anonymous.get("/states/TX")  # 401 from the access middleware, before URL resolution
    anonymous.get("/no/such/thing")
    after = scrape(http)

    def delta(route: str, status: str) -> float:
        labels = {"method": "GET", "route": route, "status": status}
        name = "http_request_duration_seconds_count"
        return sample(after, name, **labels) - sample(before, name, **labels)

    assert delta(STATE_ROUTE, "401") == 1
    assert delta("<unmatched>", "404") == 1


def test_rate_limit_refusals_are_counted_by_policy(http, anonymous, settings, one_window):
    settings.COMPLIANCE_ANONYMOUS_RATE_LIMIT = "3/m"
    before = sample(scrape(http), "ratelimit_rejections_total", policy="per-ip")

    statuses = [anonymous.get("/review_flags").status_code for _ in range(6)]
    after = sample(scrape(http), "ratelimit_rejections_total", policy="per-ip")

    assert statuses.count(429) >= 3
    assert after - before == statuses.count(429)


def test_metrics_answer_only_the_allowed_addresses(http, settings):
    settings.METRICS_ALLOWED_IPS = ["10.0.0.0/8"]
    refused = http.get("/metrics")
    settings.METRICS_ALLOWED_IPS = ["127.0.0.0/8"]
    allowed = http.get("/metrics")

    assert refused.status_code == 404
    assert allowed.status_code == 200
    assert allowed.headers["Content-Type"].startswith("text/plain")
    assert "no-store" in allowed.headers["Cache-Control"]


def test_metrics_are_served_whatever_the_host_header(http, settings):
    """Prometheus scrapes each process directly, by address."""
    settings.ALLOWED_HOSTS = ["compliance.example"]

    metrics = http.get("/metrics")
    api = http.get("/api/v1/compliance/meta")

    assert metrics.status_code == 200
    assert api.status_code == 400


def test_metrics_report_the_last_reindex_runs(http, data_repo, run_reindex):
    data_repo.seed("TX", "CA")
    run_reindex()
    data_repo.update("TX", notice={"required": "sometimes"})
    run_reindex()

    text = scrape(http)

    last = ReindexRun.objects.order_by("-finished_at").first()
    assert sample(text, "compliance_reindex_last_run_outcome", outcome="invalid_files") == 1
    assert sample(text, "compliance_reindex_last_run_outcome", outcome="ok") == 0
    assert sample(text, "compliance_reindex_last_run_timestamp_seconds") == pytest.approx(
        last.finished_at.timestamp()
    )
    assert sample(text, "compliance_reindex_last_success_timestamp_seconds") > 0
    assert sample(text, "compliance_reindex_invalid_files") == 1
    assert sample(text, "compliance_reindex_last_run_commits_read") == 1
    # Two states, each a State and a Citation version.
    assert sample(text, "compliance_published_versions_total") == 4


@pytest.mark.parametrize(
    ("route", "label"),
    [
        ("api/v1/compliance/states/<str:abbr>", "/api/v1/compliance/states/<str:abbr>"),
        # Django admin's regular-expression routes, simplified by Django's own helper.
        ("^(?P<app_label>auth|records)/$", "/<app_label>/"),
        ("", "/"),
    ],
)
def test_url_patterns_become_readable_labels(route, label):
    assert readable_route(route) == label


def test_while_the_database_is_down_the_scrape_still_reports_the_requests(http, monkeypatch):
    def unreachable():
        raise OperationalError("connection refused")

    monkeypatch.setattr(selectors, "reindex_runs_latest", unreachable)

    text = scrape(http)

    assert "http_request_duration_seconds_count" in text
    assert "compliance_reindex" not in text
