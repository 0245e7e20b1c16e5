"""The compliance admin is the integrators': English, and times in COMPLIANCE_DISPLAY_TIME_ZONE
(UTC unless set) with the zone's name, whatever zone the news admin uses."""

from datetime import UTC, datetime

import pytest
from django.test import Client

from compliance_site.access.models import ApiKey
from tests.support.compliance_factories import ApiKeyFactory
from tests.support.shared_factories import UserFactory

pytestmark = pytest.mark.django_db


def _key_list(settings, zone: str | None) -> str:
    if zone is not None:
        settings.DISPLAY_TIME_ZONE = zone
    key = ApiKeyFactory(name="clock")
    ApiKey.objects.filter(pk=key.pk).update(created_at=datetime(2026, 1, 15, 12, 0, tzinfo=UTC))
    client = Client()
    client.force_login(UserFactory(superuser=True))
    return client.get("/admin/access/apikey/").content.decode()


def test_the_admin_is_english_in_utc_by_default(settings):
    page = _key_list(settings, None)
    assert 'lang="en' in page
    assert "12:00 UTC" in page
    assert "Select API key to change" in page


def test_the_admin_zone_is_a_setting(settings):
    assert "07:00 EST" in _key_list(settings, "America/New_York")
