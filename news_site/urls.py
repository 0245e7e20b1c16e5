from django.conf import settings
from django.contrib import admin
from django.core.exceptions import DisallowedHost
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import include, path
from django.utils import timezone
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _
from django.views import defaults
from django.views.generic import RedirectView
from django_tasks_db.models import DBTaskResult

from news_site.api.errors import error_body
from news_site.ingest.selectors import ingest_worker_status
from news_site.search.warmup import web_worker_prepare
from shared.apidocs import api_reference_view
from shared.health import cache_check, database_check, liveness, readiness_view
from shared.security import login_attempts_limited

# Both services' admins may be open side by side: each is named after its service.
admin.site.site_header = format_lazy(_("{site}: the newsroom"), site=settings.NEWS_SITE_NAME)
admin.site.site_title = format_lazy(_("{site} newsroom"), site=settings.NEWS_SITE_NAME)
admin.site.index_title = _("The newsroom's tools")
# The sidebar repeats the index's list of models and takes a third of a 1280 px screen from the
# lists' columns; the breadcrumbs and the index lead to every page.
admin.site.enable_nav_sidebar = False
# The task worker's queue is machinery, not editors' work: its admin (django_tasks_db's, in
# English) is left out; a feed's own page shows how its last fetch went.
admin.site.unregister(DBTaskResult)

urlpatterns = [
    path("admin/login/", login_attempts_limited(admin.site.login)),
    path("admin/", admin.site.urls),
    # The browsable API reference (Swagger UI, assets served here: shared/apidocs.py).
    path(
        "api/v1/docs",
        api_reference_view(schema_url_name="api-schema", title="News Aggregation Service"),
    ),
    path("api/v1/", include("news_site.api.urls")),
    # The prefix as people type it: to its index.
    path("api/v1", RedirectView.as_view(url="/api/v1/", permanent=True)),
    path("healthz", liveness),
    path(
        "readyz",
        readiness_view(
            # "search" waits for the embedding model and the vector index, which a gunicorn
            # worker loads before it accepts connections; elsewhere the first probe loads them.
            {"database": database_check, "cache": cache_check, "search": web_worker_prepare},
            reports={"worker": lambda: ingest_worker_status(now=timezone.now())},
        ),
    ),
    path("", include("news_site.legacy.urls")),
    path("", include("news_site.agents.urls")),
    # Last: its guide pages take `/<slug>`, which must not shadow any other path.
    path("", include("news_site.pages.urls")),
]


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """A request Django refuses before any view (a Host not in ALLOWED_HOSTS, a malformed
    request): under /api/v1 in the v1 error envelope, elsewhere Django's page."""
    if not request.path.startswith("/api/"):
        return defaults.bad_request(request, exception)
    message = (
        "this host name is not served here (ALLOWED_HOSTS)"
        if isinstance(exception, DisallowedHost)
        else "bad request"
    )
    return JsonResponse(error_body("invalid_request", message), status=400)


handler400 = bad_request
