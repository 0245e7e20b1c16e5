from django.apps import AppConfig


class SearchConfig(AppConfig):
    name = "news_site.search"
    label = "search"
    verbose_name = "Sökning"
