from django.urls import path

from news_site.agents import views
from news_site.agents.feeds import LatestEntriesFeed
from shared.http import read_only

# The HTML pages on `/` and `/entries/N` (which answer markdown by Accept) are news_site.pages.
# Read-only surfaces: unsafe methods get 405 with Allow, never the CSRF check's 403 page.
urlpatterns = [
    path("entries.rss", read_only(LatestEntriesFeed()), name="entries-rss"),
    path("index.md", read_only(views.index_markdown), name="index-md"),
    path("llms.txt", read_only(views.llms_txt), name="llms-txt"),
    path("entries/<id:entry_id>.md", read_only(views.entry_markdown), name="entry-md"),
    # Slugs are letters, digits and hyphens only, so no path can escape the guide table.
    path("<guide_slug:slug>.md", read_only(views.guide_markdown), name="guide-md"),
]
