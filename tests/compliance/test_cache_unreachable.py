"""The compliance service with its cache unreachable (a port nobody listens on): reindex,
monitoring, the admin's flag actions and the review report still work, and nothing the cache
failed to do is rolled back."""

from datetime import UTC, datetime

import pytest

from compliance_site.monitoring.models import ReviewFlag, SourceSnapshot
from compliance_site.monitoring.services import flag_raise
from tests.compliance.builders import HTML, DataRepo, run_command, state_payload
from tests.conftest import free_port
from tests.support.redis_cache import redis_cache
from tests.support.shared_factories import UserFactory

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]


@pytest.fixture
def repo(data_repo) -> DataRepo:
    data_repo.seed("TX", "CA")
    return data_repo


@pytest.fixture
def cache_down(settings):
    settings.CACHES = {
        "default": redis_cache(f"redis://127.0.0.1:{free_port()}/0", timeout_seconds=0.2)
    }


def test_with_the_cache_unreachable_reindex_monitor_and_admin_still_work(
    repo, local_server, settings, cache_down, client
):
    flag_raise(state_abbreviation="TX", reason="Check it.")
    settings.FETCH_ALLOW_PRIVATE_NETWORKS = True
    local_server.respond("/tx", body=b"<p>Notice.</p>", headers=HTML)
    repo.write(
        "TX",
        state_payload(
            "TX",
            last_verified_at=datetime.now(UTC).date().isoformat(),
            sources=[{"name": "tx", "url": local_server.url("/tx")}],
        ),
    )
    repo.commit("Re-verified", when=datetime.now(UTC))

    assert run_command("reindex")[0] == 0
    assert ReviewFlag.objects.get().cleared_at is not None  # not rolled back

    assert run_command("monitor_sources")[0] == 0
    assert SourceSnapshot.objects.filter(successful=True).count() == 1

    flag = flag_raise(state_abbreviation="CA", reason="Another.")
    admin = UserFactory(username="admin", superuser=True)
    client.force_login(admin)
    response = client.post(
        "/admin/monitoring/reviewflag/",
        {"action": "clear_flags", "_selected_action": [flag.pk]},
    )
    assert response.status_code == 302
    flag.refresh_from_db()
    assert flag.cleared_at is not None
    assert client.get("/api/v1/compliance/review_flags").status_code == 200
