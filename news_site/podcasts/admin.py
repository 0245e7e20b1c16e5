from django.contrib import admin
from django.utils.translation import gettext_lazy as _

from news_site.news.admin import NewsAdmin
from news_site.podcasts.models import PodcastEpisode


def duration_text(seconds: int) -> str:
    """h:mm:ss, as players show a length ("1:02:05")."""
    minutes, second = divmod(seconds, 60)
    hours, minute = divmod(minutes, 60)
    return f"{hours}:{minute:02d}:{second:02d}"


@admin.register(PodcastEpisode)
class PodcastEpisodeAdmin(NewsAdmin):
    list_display = ("title", "published_on", "length", "transcript_attempts")
    list_filter = ("transcript_attempts",)
    search_fields = ("title", "description", "episode_id", "guid")
    date_hierarchy = "published_on"

    def get_readonly_fields(self, request, obj=None):
        # A stored episode's ids are in links and in apps' saved data: they never change.
        fixed = ("episode_id", "guid") if obj is not None else ()
        return (*super().get_readonly_fields(request, obj), *fixed)

    @admin.display(description=_("length"), ordering="duration_seconds")
    def length(self, episode: PodcastEpisode) -> str | None:
        # None: admin's empty-value mark, as for any field the feed left out.
        seconds = episode.duration_seconds
        return None if seconds is None else duration_text(seconds)
