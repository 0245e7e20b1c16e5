from django.apps import AppConfig


class MonitoringConfig(AppConfig):
    name = "compliance_site.monitoring"
    label = "monitoring"
    verbose_name = "Source monitoring and review flags"
