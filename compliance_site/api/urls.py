from django.urls import path

from compliance_site.api import views

urlpatterns = [
    path("meta", views.MetaView.as_view()),
    path("states/<str:abbr>", views.StateView.as_view()),
    path("states/<str:abbr>/versions", views.StateVersionListView.as_view()),
    path("states/<str:abbr>/versions/<str:number>", views.StateVersionView.as_view()),
    path("esa_programs", views.EsaProgramListView.as_view()),
    path("esa_programs/<str:abbr>", views.EsaProgramView.as_view()),
    path("changes", views.ChangeFeedView.as_view()),
    path("review_flags", views.ReviewFlagsView.as_view()),
    path("citations/<str:abbr>", views.CitationView.as_view()),
]
