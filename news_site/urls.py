from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.urls import path


def placeholder(request: HttpRequest) -> HttpResponse:
    return HttpResponse(
        "The news aggregation service is being built; see the README.\n",
        content_type="text/plain; charset=utf-8",
    )


urlpatterns = [
    path("", placeholder),
    path("admin/", admin.site.urls),
]
