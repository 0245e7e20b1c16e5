from django.contrib import admin
from django.urls import include, path
from django.views.generic import RedirectView

from compliance_site.api.schema_view import SchemaView
from shared.health import cache_check, database_check, liveness, readiness_view
from shared.security import login_attempts_limited

# Both services' admins may be open side by side: each is named after its service.
admin.site.site_header = "Compliance data service: admin"
admin.site.site_title = "Compliance data admin"
admin.site.index_title = "Records, monitoring and API keys"

urlpatterns = [
    path("api/v1/compliance/", include("compliance_site.api.urls")),
    path("api/v1/compliance/schema", SchemaView.as_view(), name="schema"),
    # The prefix as people type it: to its index.
    path("api/v1/compliance", RedirectView.as_view(url="/api/v1/compliance/", permanent=True)),
    path("admin/login/", login_attempts_limited(admin.site.login)),
    path("admin/", admin.site.urls),
    path("healthz", liveness),
    path("readyz", readiness_view({"database": database_check, "cache": cache_check})),
    # For people: what the service is, and the integrators' docs (compliance_site/landing).
    path("", include("compliance_site.landing.urls")),
]

# Unknown paths and server errors answer in the API's error envelope.
handler400 = "compliance_site.api.handlers.bad_request"
handler404 = "compliance_site.api.handlers.not_found"
handler500 = "compliance_site.api.handlers.server_error"
