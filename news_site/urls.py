from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", include("news_site.api.urls")),
    path("", include("news_site.legacy.urls")),
    path("", include("news_site.agents.urls")),
]
