"""A stale admin form in the compliance service: a page in the admin's look, named after the
service, that says what happened, instead of Django's bare CSRF page."""

import httpx
import pytest

from tests.support.inprocess import BASE_URL, DjangoTransport
from tests.support.shared_factories import UserFactory

pytestmark = pytest.mark.django_db


def test_a_stale_form_gets_a_page_in_the_admins_look(served_queries):
    user = UserFactory(superuser=True)
    transport = DjangoTransport(served_queries)
    transport.client.force_login(user)
    with httpx.Client(transport=transport, base_url=BASE_URL) as client:
        form = client.get("/admin/access/apikey/add/")
        assert "Compliance data service: admin" in form.text

        refused = client.post(
            "/admin/access/apikey/add/",
            data={"csrfmiddlewaretoken": "stale" * 8, "name": "x"},
            headers={"Referer": BASE_URL + "/admin/access/apikey/add/"},
        )

    assert refused.status_code == 403
    assert "The form could not be saved" in refused.text
    assert "Compliance data service: admin" in refused.text
    assert "admin/css/base.css" in refused.text
    assert 'href="/admin/access/apikey/add/"' in refused.text
