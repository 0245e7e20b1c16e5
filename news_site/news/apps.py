from django.apps import AppConfig


class NewsConfig(AppConfig):
    name = "news_site.news"
    label = "news"
    verbose_name = "Nyheter"
