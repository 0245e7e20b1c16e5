from django.apps import AppConfig


class IngestConfig(AppConfig):
    name = "news_site.ingest"
    label = "ingest"
    verbose_name = "Ingest"
