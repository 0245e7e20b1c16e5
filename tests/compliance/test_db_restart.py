"""The compliance service while its PostgreSQL is stopped or restarted (a private cluster, so
the test may take it down): 503 in the API's envelope with Retry-After, never a 500 or a hang,
and every request succeeds again once the database is back, without restarting gunicorn."""

from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest
from django.conf import settings as django_settings

from tests.compliance.builders import DataRepo
from tests.conftest import Gunicorn
from tests.private_services import PgCluster, manage, postgres_pass_only, restart_under_load

CLIENT_TIMEOUT = 10
API = "/api/v1/compliance"


@dataclass
class Served:
    cluster: PgCluster
    server: Gunicorn
    key: dict[str, str]


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[Served]:
    postgres_pass_only(django_settings.DATABASES["default"])
    cluster = PgCluster()
    server = None
    try:
        cluster.start()
        repo = DataRepo(tmp_path_factory.mktemp("restart") / "data")
        repo.seed("TX", "CA")
        env = {
            "COMPLIANCE_DATABASE_URL": cluster.create_database("compliance"),
            "COMPLIANCE_DATA_REPO": str(repo.path),
            "SECRET_KEY": "test-secret",
            "SECURE_SSL_REDIRECT": "false",
            # The load below is far over the production limits; limits are not under test.
            "COMPLIANCE_ANONYMOUS_RATE_LIMIT": "1000000/m",
        }
        manage("compliance_site", "migrate", "--noinput", "-v", "0", env=env)
        manage("compliance_site", "reindex", env=env)
        created = manage(
            "compliance_site",
            "create_api_key",
            "--name",
            "restart",
            "--rate-limit-per-minute",
            "1000000",
            env=env,
        )
        server = Gunicorn("compliance_site.wsgi", env, workers=2)
        server.wait_ready("/healthz")
        key = {"Authorization": f"Bearer {created.strip().splitlines()[-1]}"}
        yield Served(cluster, server, key)
    finally:
        if server is not None:
            server.stop()
        cluster.destroy()


def requests(served: Served) -> list[tuple[str, dict[str, str]]]:
    return [
        (f"{API}/states/TX", served.key),
        (f"{API}/changes", served.key),
        (f"{API}/review_flags", {}),
    ]


def get(served: Served, path: str, headers: dict[str, str]) -> httpx.Response:
    return httpx.get(served.server.url + path, headers=headers, timeout=CLIENT_TIMEOUT)


def test_a_stopped_database_answers_503_in_the_envelope_and_recovers(served):
    before = {path: get(served, path, headers) for path, headers in requests(served)}
    assert {r.status_code for r in before.values()} == {200}

    served.cluster.stop()
    try:
        down = {path: get(served, path, headers) for path, headers in requests(served)}
        ready = get(served, "/readyz", {})
    finally:
        served.cluster.start()
    # Recovered: ready again without restarting gunicorn. The pool reconnects with backoff, and
    # on a loaded machine its first attempts may meet a PostgreSQL still starting up.
    served.server.wait_serving("/readyz")
    after = {path: get(served, path, headers) for path, headers in requests(served)}

    for path in (f"{API}/states/TX", f"{API}/changes"):
        response = down[path]
        assert response.status_code == 503, path
        assert response.json()["error"]["code"] == "service_unavailable", path
        assert response.headers["Retry-After"] == "5", path
        assert response.elapsed.total_seconds() < CLIENT_TIMEOUT / 2, path
    # The review report is kept in the shared cache (Redis) for five minutes, and anonymous
    # callers need no key lookup: it is still served from there.
    assert down[f"{API}/review_flags"].status_code == 200
    assert ready.status_code == 503
    assert {r.status_code for r in after.values()} == {200}
    # The published versions are all still there, unchanged.
    for path in (f"{API}/states/TX", f"{API}/changes"):
        assert after[path].json()["data"] == before[path].json()["data"], path


def test_a_restart_under_load_gives_503s_only_while_it_lasts(served):
    load = restart_under_load(
        served.cluster, served.server.url, requests(served), timeout=CLIENT_TIMEOUT
    )

    print(load.report())
    assert {a.status for a in load.answers} <= {200, 503}
    assert max(a.seconds for a in load.answers) < CLIENT_TIMEOUT / 2
    settled = load.settled()
    assert len(settled) > 20
    assert {a.status for a in settled} == {200}
