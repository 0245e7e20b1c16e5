from django.apps import AppConfig


class AccessConfig(AppConfig):
    name = "compliance_site.access"
    label = "access"
    verbose_name = "API keys"
