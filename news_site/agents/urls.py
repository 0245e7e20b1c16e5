from django.urls import path, re_path

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
    re_path(r"^(?P<slug>[a-z0-9]+(?:-[a-z0-9]+)*)\.md$", views.guide_markdown, name="guide-md"),
]
