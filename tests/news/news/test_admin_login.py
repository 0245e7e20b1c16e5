"""Django admin of the news service over HTTP: the checks of
tests/shared/admin_login_checks.py (staff only, CSRF, login attempts limited)."""

import pytest

from tests.shared.admin_login_checks import AdminLoginChecks

pytestmark = pytest.mark.every_backend


class TestNewsAdminLogin(AdminLoginChecks):
    admin_page = "/admin/news/entry/"
    limited_text = "För många inloggningsförsök. Försök igen om"
