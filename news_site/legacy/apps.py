from django.apps import AppConfig


class LegacyConfig(AppConfig):
    name = "news_site.legacy"
    label = "legacy"
