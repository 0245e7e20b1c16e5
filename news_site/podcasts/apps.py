from django.apps import AppConfig


class PodcastsConfig(AppConfig):
    name = "news_site.podcasts"
    label = "podcasts"
    verbose_name = "Podcasts"
