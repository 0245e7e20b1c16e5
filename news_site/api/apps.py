from django.apps import AppConfig


class ApiConfig(AppConfig):
    name = "news_site.api"
    label = "api"
    verbose_name = "API v1"

    def ready(self) -> None:
        # Registers the Bearer scheme with drf-spectacular.
        from news_site.api import schema  # noqa: F401
