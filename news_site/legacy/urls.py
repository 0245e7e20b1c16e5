from django.urls import path, re_path

from news_site.legacy import views

# Ids are at most 20 digits; longer ones never match and get the plain 404.
_ID = r"(?P<{}>[0-9]{{1,20}})"

urlpatterns = [
    path("entries.json", views.entries, name="legacy-entries"),
    path("entries/popular.json", views.entries_popular, name="legacy-entries-popular"),
    re_path(rf"^entries/{_ID.format('entry_id')}\.json$", views.entry_detail, name="legacy-entry"),
    path("feeds.json", views.feeds, name="legacy-feeds"),
    re_path(rf"^feeds/{_ID.format('feed_id')}\.json$", views.feed_entries, name="legacy-feed"),
    path("tags.json", views.tags, name="legacy-tags"),
    re_path(rf"^tags/{_ID.format('tag_id')}\.json$", views.tag_entries, name="legacy-tag"),
]
