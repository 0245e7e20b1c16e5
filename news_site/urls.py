from django.contrib import admin
from django.urls import include, path
from django.utils import timezone

from news_site.news.selectors import ingest_worker_status
from news_site.search.embeddings import web_worker_prepare
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
            # "search" waits for the embedding model and the vector index, which a gunicorn
            # worker loads before it accepts connections; elsewhere the first probe loads them.
            {"database": database_check, "cache": cache_check, "search": web_worker_prepare},
            reports={"worker": lambda: ingest_worker_status(now=timezone.now())},
        ),
    ),
    path("", include("news_site.legacy.urls")),
    path("", include("news_site.agents.urls")),
]
