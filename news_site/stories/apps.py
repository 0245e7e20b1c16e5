from django.apps import AppConfig


class StoriesConfig(AppConfig):
    name = "news_site.stories"
    label = "stories"
    verbose_name = "Storys"
