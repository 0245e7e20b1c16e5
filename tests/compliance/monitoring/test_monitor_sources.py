"""monitor_sources against a local HTTP server standing in for the government sites."""

import time

import pytest
from django.core.management import call_command

from compliance_site.monitoring.models import ReviewFlag, SourceSnapshot
from compliance_site.monitoring.services import monitor_sources
from tests.compliance.builders import state_payload

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]

PAGE = """<html><head><title>Home education</title><script>var t = {stamp};</script></head>
<body><nav>Menu</nav><p>Parents must file a notice within {days} days.</p>
<p>Last updated: {updated}</p><input type="hidden" name="csrf" value="{token}"></body></html>"""


def page(days: int = 30, stamp: int = 1, updated: str = "March 1, 2026", token: str = "a" * 32):
    return PAGE.format(days=days, stamp=stamp, updated=updated, token=token).encode()


@pytest.fixture
def monitored(data_repo, run_reindex, local_server, settings):
    settings.FETCH_ALLOW_PRIVATE_NETWORKS = True
    settings.MONITOR_TIMEOUT_SECONDS = 1
    settings.MONITOR_MAX_BYTES = 50_000
    sources = {
        "TX": [{"name": "Texas statute", "url": local_server.url("/tx")}],
        "OH": [
            {"name": "Ohio rule", "url": local_server.url("/oh")},
            {"name": "Ohio form", "url": local_server.url("/oh-form")},
        ],
    }
    for abbr, urls in sources.items():
        data_repo.write(abbr, state_payload(abbr, sources=urls))
    data_repo.commit("Seed with local sources")
    run_reindex()
    html = {"Content-Type": "text/html; charset=utf-8"}
    local_server.respond("/tx", body=page(), headers=html)
    local_server.respond("/oh", body=page(), headers=html)
    local_server.respond(
        "/oh-form", body=b"%PDF-1.7 form", headers={"Content-Type": "application/pdf"}
    )
    return local_server


def test_the_first_run_records_a_baseline_and_flags_nothing(monitored):
    report = monitor_sources()

    assert report.fetched == 3
    assert report.failed == 0
    assert report.changed == []
    assert SourceSnapshot.objects.filter(successful=True).count() == 3
    assert not ReviewFlag.objects.exists()
    user_agents = {headers["User-Agent"] for headers in monitored.headers_seen()}
    assert user_agents == {"ComplianceSourceMonitor/1.0 (+https://compliance.example/about)"}


def test_markup_scripts_and_volatile_parts_do_not_flag(monitored):
    monitor_sources()
    html = {"Content-Type": "text/html; charset=utf-8"}
    monitored.respond(
        "/tx", body=page(stamp=99, updated="November 20, 2026", token="b" * 40), headers=html
    )

    report = monitor_sources()

    assert report.changed == []
    assert not ReviewFlag.objects.exists()


def test_a_real_change_flags_the_state_and_shows_in_the_report(monitored, anonymous):
    monitor_sources()
    monitored.respond("/tx", body=page(days=14), headers={"Content-Type": "text/html"})

    report = monitor_sources()

    assert report.changed == [f"TX {monitored.url('/tx')}"]
    flag = ReviewFlag.objects.get()
    assert flag.state_abbreviation == "TX"
    assert flag.origin == "monitor"
    assert "Texas statute" in flag.reason
    flagged = anonymous.get("/review_flags").json()["data"]["flagged"]
    assert flagged[0]["abbreviation"] == "TX"
    assert flagged[0]["changed_url"] == monitored.url("/tx")


@pytest.mark.parametrize(
    ("setup", "error"),
    [
        (lambda s: s.respond("/tx", status=503, body=b"down"), "http_503"),
        (lambda s: s.respond("/tx", body=b"x" * 60_000), "too_large"),
        (lambda s: s.routes.__setitem__("/tx", _slow), "timeout"),
    ],
)
def test_failures_are_recorded_as_unsuccessful_and_never_flag(monitored, setup, error):
    monitor_sources()
    setup(monitored)

    report = monitor_sources()

    assert report.failed == 1
    failed = SourceSnapshot.objects.get(successful=False)
    assert failed.error == error
    assert failed.content_hash == ""
    assert not ReviewFlag.objects.exists()
    # After an outage the unchanged page does not look like a change either.
    monitored.respond("/tx", body=page(), headers={"Content-Type": "text/html"})
    assert monitor_sources().changed == []


def _slow(request) -> None:
    request.send_response(200)
    request.send_header("Content-Length", "1000")
    request.end_headers()
    for _ in range(30):
        request.wfile.write(b"x")
        request.wfile.flush()
        time.sleep(0.1)


def test_private_addresses_are_refused_by_default(monitored, settings):
    settings.FETCH_ALLOW_PRIVATE_NETWORKS = False

    report = monitor_sources()

    assert report.failed == 3
    assert set(SourceSnapshot.objects.values_list("error", flat=True)) == {"blocked_address"}
    assert monitored.seen == []


def test_the_command_prints_a_summary(monitored, capsys):
    call_command("monitor_sources")

    assert "monitor_sources: 3 fetched, 0 failed, 0 changed" in capsys.readouterr().out


def test_a_new_normaliser_re_baselines_instead_of_flagging(monitored):
    monitor_sources()
    # As if the last successful fetches had been hashed by the previous normaliser.
    SourceSnapshot.objects.update(normalizer_version=1, content_hash="sha256:" + "0" * 64)

    report = monitor_sources()

    assert report.changed == []
    assert not ReviewFlag.objects.exists()
    monitored.respond("/tx", body=page(days=14), headers={"Content-Type": "text/html"})
    assert monitor_sources().changed == [f"TX {monitored.url('/tx')}"]
