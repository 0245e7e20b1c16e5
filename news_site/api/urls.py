from django.urls import path

from news_site.api import auth_views, views
from news_site.api.errors import not_found_view
from news_site.api.index import index_view
from news_site.api.schema_view import SchemaView

# Ids, slugs and episode ids are path converters (news/converters.py); a path they do not
# match falls through to the JSON 404.

urlpatterns = [
    path("schema", SchemaView.as_view(), name="api-schema"),
    path("auth/login", auth_views.LoginView.as_view()),
    path("auth/logout", auth_views.LogoutView.as_view()),
    path("auth/account", auth_views.AccountDeleteView.as_view()),
    path("entries", views.EntryListView.as_view()),
    path("entries/popular", views.EntryPopularView.as_view()),
    path("entries/follows", views.EntryFollowsView.as_view()),
    path("entries/search", views.EntrySearchView.as_view()),
    path("entries/<id:entry_id>", views.EntryDetailView.as_view()),
    path("feeds", views.FeedListView.as_view()),
    path("feeds/<id:feed_id>", views.FeedDetailView.as_view()),
    path("feeds/<id:feed_id>/entries", views.FeedEntriesView.as_view()),
    path("feeds/<id:feed_id>/follow", views.FeedFollowView.as_view()),
    path("tags", views.TagListView.as_view()),
    path("tags/<tag_slug:slug>", views.TagDetailView.as_view()),
    path("tags/<tag_slug:slug>/entries", views.TagEntriesView.as_view()),
    path("stories", views.StoryListView.as_view()),
    path(
        "stories/<id_slug:story_id>",
        views.StoryDetailView.as_view(),
        name="api-story",
    ),
    path("podd_episodes", views.EpisodeListView.as_view()),
    path(
        "podd_episodes/<episode_id:episode_id>",
        views.EpisodeDetailView.as_view(),
        name="api-episode",
    ),
    path("", index_view, name="api-index"),
    # Every other path answers the envelope's 404, line breaks included (`<path:>` is `.+`,
    # which stops at one, and the request would fall through to the site's HTML 404).
    path("<any_path:path>", not_found_view),
]
