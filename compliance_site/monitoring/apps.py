from django.apps import AppConfig


class MonitoringConfig(AppConfig):
    name = "compliance_site.monitoring"
    label = "monitoring"
    verbose_name = "Source monitoring and review flags"

    def ready(self) -> None:
        # Connects the receivers of what records announces (records never imports monitoring).
        from compliance_site.monitoring import receivers  # noqa: F401
