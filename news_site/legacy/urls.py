from django.urls import path

from news_site.legacy import views
from shared.http import read_only

# Ids are at most 20 digits; longer ones never match and get the plain 404.

# Read-only surfaces: unsafe methods get 405 with Allow, never the CSRF check's 403 page.
urlpatterns = [
    path("entries.json", read_only(views.entries), name="legacy-entries"),
    path("entries/popular.json", read_only(views.entries_popular), name="legacy-entries-popular"),
    path("entries/<id:entry_id>.json", read_only(views.entry_detail), name="legacy-entry"),
    path("feeds.json", read_only(views.feeds), name="legacy-feeds"),
    path("feeds/<id:feed_id>.json", read_only(views.feed_entries), name="legacy-feed"),
    path("tags.json", read_only(views.tags), name="legacy-tags"),
    path("tags/<id:tag_id>.json", read_only(views.tag_entries), name="legacy-tag"),
]
