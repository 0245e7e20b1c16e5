from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "compliance_site.webhooks"
    label = "webhooks"
    verbose_name = "Webhooks"

    def ready(self) -> None:
        # Connects the wake-up on what records publishes (records never imports webhooks).
        from compliance_site.webhooks import receivers  # noqa: F401
