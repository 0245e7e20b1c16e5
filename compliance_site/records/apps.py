from django.apps import AppConfig


class RecordsConfig(AppConfig):
    name = "compliance_site.records"
    label = "records"
    verbose_name = "Published records"
