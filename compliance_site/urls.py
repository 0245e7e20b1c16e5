from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView

urlpatterns = [
    path("api/v1/compliance/", include("compliance_site.api.urls")),
    path("api/v1/compliance/schema", SpectacularAPIView.as_view(), name="schema"),
    path("admin/", admin.site.urls),
]

# Unknown paths and server errors answer in the API's error envelope.
handler404 = "compliance_site.api.handlers.not_found"
handler500 = "compliance_site.api.handlers.server_error"
