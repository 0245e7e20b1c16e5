from django.contrib import admin

from news_site.news.admin import NewsAdmin
from news_site.podcasts.models import PodcastEpisode


@admin.register(PodcastEpisode)
class PodcastEpisodeAdmin(NewsAdmin):
    list_display = ("title", "published_on", "duration_seconds", "transcript_attempts")
    list_filter = ("transcript_attempts",)
    search_fields = ("title", "description", "episode_id")
    date_hierarchy = "published_on"
