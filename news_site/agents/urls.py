from django.urls import path

from news_site.agents import views
from news_site.agents.feeds import LatestEntriesFeed

urlpatterns = [
    path("", views.home, name="home"),
    path("entries.rss", LatestEntriesFeed(), name="entries-rss"),
    path("index.md", views.index_markdown, name="index-md"),
    path("llms.txt", views.llms_txt, name="llms-txt"),
    path("entries/<id:entry_id>", views.entry_page, name="entry"),
    path("entries/<id:entry_id>.md", views.entry_markdown, name="entry-md"),
    # Slugs are letters, digits and hyphens only, so no path can escape the guide table.
    path("<guide_slug:slug>.md", views.guide_markdown, name="guide-md"),
]
