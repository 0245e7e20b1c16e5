from django.apps import AppConfig


class PagesConfig(AppConfig):
    name = "news_site.pages"
    label = "pages"
