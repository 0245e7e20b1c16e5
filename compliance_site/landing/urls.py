from django.urls import path

from compliance_site.landing import views
from shared.http import read_only

urlpatterns = [
    path("", read_only(views.landing), name="landing"),
    path("docs/<slug:name>", read_only(views.doc), name="doc"),
]
