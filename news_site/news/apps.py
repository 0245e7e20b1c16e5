from django.apps import AppConfig
from django.urls import register_converter
from django.utils.translation import gettext_lazy as _

from news_site.news.converters import (
    AnyPathConverter,
    EpisodeIdConverter,
    GuideSlugConverter,
    IdConverter,
    IdSlugConverter,
    TagSlugConverter,
)


class NewsConfig(AppConfig):
    name = "news_site.news"
    label = "news"
    verbose_name = _("News")

    def ready(self) -> None:
        # Before any URLconf is read: every surface's paths use these.
        register_converter(IdConverter, "id")
        register_converter(IdSlugConverter, "id_slug")
        register_converter(TagSlugConverter, "tag_slug")
        register_converter(GuideSlugConverter, "guide_slug")
        register_converter(EpisodeIdConverter, "episode_id")
        register_converter(AnyPathConverter, "any_path")
