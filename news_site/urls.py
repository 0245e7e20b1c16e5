from django.contrib import admin
from django.urls import include, path
from django.utils import timezone

from news_site.ingest.selectors import ingest_worker_status
from shared.health import cache_check, database_check, liveness, readiness_view
from shared.security import login_attempts_limited

urlpatterns = [
    path("admin/login/", login_attempts_limited(admin.site.login)),
    path("admin/", admin.site.urls),
    path("api/v1/", include("news_site.api.urls")),
    path("healthz", liveness),
    path(
        "readyz",
        readiness_view(
            {"database": database_check, "cache": cache_check},
            reports={"worker": lambda: ingest_worker_status(now=timezone.now())},
        ),
    ),
    path("", include("news_site.legacy.urls")),
    path("", include("news_site.agents.urls")),
]
