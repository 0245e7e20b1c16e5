from django.apps import AppConfig


class ApiConfig(AppConfig):
    name = "compliance_site.api"
    label = "compliance_api"
    verbose_name = "Public API"
