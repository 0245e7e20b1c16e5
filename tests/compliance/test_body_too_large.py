"""A body larger than the service accepts, sent straight to gunicorn (no nginx in front to
refuse it first): 413 in the compliance error shape, never a 500."""

import httpx
import pytest
from django.conf import settings as django_settings

from tests.conftest import Gunicorn, database_url_for_subprocess

# The server in another process writes nothing the test reads and reads nothing the test
# writes: the test database without a flush afterwards.
pytestmark = pytest.mark.django_db


def test_an_oversized_body_is_413_in_the_error_shape():
    env = {
        "COMPLIANCE_DATABASE_URL": database_url_for_subprocess(
            django_settings.DATABASES["default"]
        ),
        "SECRET_KEY": "test-secret",
        "SECURE_SSL_REDIRECT": "false",
    }
    server = Gunicorn("compliance_site.wsgi", env, workers=1)
    body = b"x" * (3 * 1024 * 1024)
    try:
        server.wait_ready("/healthz")
        api = httpx.post(
            f"{server.url}/api/v1/compliance/changes",
            content=body,
            headers={"Content-Type": "application/json"},
            timeout=30,
        )
        admin = httpx.post(
            f"{server.url}/admin/login/",
            content=body,
            headers={"Content-Type": "application/x-www-form-urlencoded"},
            timeout=30,
        )
    finally:
        server.stop()

    assert api.status_code == 413
    limit = django_settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    assert api.json() == {
        "error": {
            "code": "payload_too_large",
            "message": f"the request body is larger than {limit} bytes",
        }
    }
    assert admin.status_code == 413
