"""Django admin of the compliance service over HTTP: the checks of
tests/shared/admin_login_checks.py (staff only, CSRF, login attempts limited)."""

from tests.shared.admin_login_checks import AdminLoginChecks


class TestComplianceAdminLogin(AdminLoginChecks):
    admin_page = "/admin/access/apikey/"
    limited_text = "Too many login attempts. Try again in"
