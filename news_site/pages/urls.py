from django.urls import path

from news_site.pages import views
from shared.http import read_only

# Swedish paths for people. A guide's page is `/<slug>`, last, so every other path wins: a
# guide cannot take the name of a list (docs/decisions.md). Read-only: unsafe methods get 405.
urlpatterns = [
    path("", read_only(views.home), name="home"),
    path("entries/<id:entry_id>", read_only(views.entry), name="entry"),
    path("handelser/<id_slug:story_id>", read_only(views.story), name="story"),
    path("sok", read_only(views.search), name="search"),
    path("guider", read_only(views.guides), name="guides"),
    path("podd", read_only(views.episodes), name="episodes"),
    path("podd/<episode_id:episode_id>", read_only(views.episode), name="episode"),
    path("taggar", read_only(views.tags), name="tags"),
    path("taggar/<tag_slug:slug>", read_only(views.tag), name="tag"),
    path("kallor", read_only(views.sources), name="sources"),
    path("kallor/<id:feed_id>", read_only(views.source), name="source"),
    path("<guide_slug:slug>", read_only(views.guide), name="guide"),
]
