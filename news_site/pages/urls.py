from collections.abc import Callable

from django.http import HttpResponse
from django.urls import path
from django.views.decorators.gzip import gzip_page

from news_site.pages import views
from shared.http import read_only


def page(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Read-only (unsafe methods get 405) and compressed: a phone on a slow network gets a
    quarter of the bytes, also where no nginx compresses in front (the quick start)."""
    return read_only(gzip_page(view))


# Swedish paths for people. A guide's page is `/<slug>`, last, so every other path wins: a
# guide cannot take the name of a list (docs/decisions.md).
urlpatterns = [
    path("", page(views.home), name="home"),
    path("entries/<id:entry_id>", page(views.entry), name="entry"),
    path("handelser/<id_slug:story_id>", page(views.story), name="story"),
    path("sok", page(views.search), name="search"),
    path("guider", page(views.guides), name="guides"),
    path("podd", page(views.episodes), name="episodes"),
    path("podd/<episode_id:episode_id>", page(views.episode), name="episode"),
    path("taggar", page(views.tags), name="tags"),
    path("taggar/<tag_slug:slug>", page(views.tag), name="tag"),
    path("kallor", page(views.sources), name="sources"),
    path("kallor/<id:feed_id>", page(views.source), name="source"),
    path("<guide_slug:slug>", page(views.guide), name="guide"),
]
