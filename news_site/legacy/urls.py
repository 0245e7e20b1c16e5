from django.urls import path

from news_site.legacy import views

# Ids are at most 20 digits; longer ones never match and get the plain 404.

urlpatterns = [
    path("entries.json", views.entries, name="legacy-entries"),
    path("entries/popular.json", views.entries_popular, name="legacy-entries-popular"),
    path("entries/<id:entry_id>.json", views.entry_detail, name="legacy-entry"),
    path("feeds.json", views.feeds, name="legacy-feeds"),
    path("feeds/<id:feed_id>.json", views.feed_entries, name="legacy-feed"),
    path("tags.json", views.tags, name="legacy-tags"),
    path("tags/<id:tag_id>.json", views.tag_entries, name="legacy-tag"),
]
