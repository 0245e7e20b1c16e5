"""Webhooks in the admin: endpoints with their state (a disabled one says why), and the
delivery log with a redeliver action. Secrets are never shown here; owners rotate them
through the API."""

from django.contrib import admin, messages
from django.utils import timezone

from compliance_site.webhooks import services
from compliance_site.webhooks.models import WebhookDelivery, WebhookEndpoint


@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(admin.ModelAdmin):
    list_display = ["id", "url", "api_key", "enabled", "disabled_at", "failing_since"]
    list_filter = ["enabled"]
    search_fields = ["url"]
    # Changed only through the actions, which do what the API does (re-enabling also makes
    # the waiting deliveries due).
    readonly_fields = [
        "api_key",
        "url",
        "resource_types",
        "enabled",
        "disabled_at",
        "disabled_reason",
        "failing_since",
        "created_at",
    ]
    actions = ["enable"]

    def has_add_permission(self, request) -> bool:
        # Registered by API key owners (the secret is shown to them once).
        return False

    @admin.action(description="Re-enable (waiting deliveries are sent, in order)")
    def enable(self, request, queryset) -> None:
        now = timezone.now()
        for endpoint in queryset:
            services.webhook_enable(endpoint=endpoint, now=now)
        self.message_user(request, f"{queryset.count()} endpoints enabled", messages.SUCCESS)


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "endpoint",
        "resource_type",
        "resource_key",
        "status",
        "attempts",
        "response_status",
        "next_attempt_at",
        "delivered_at",
    ]
    list_filter = ["status", "resource_type"]
    list_select_related = ["endpoint"]
    search_fields = ["=endpoint__id", "=resource_key"]
    actions = ["redeliver"]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    @admin.action(description="Redeliver")
    def redeliver(self, request, queryset) -> None:
        now = timezone.now()
        for delivery in queryset:
            services.delivery_redeliver(delivery=delivery, now=now)
        self.message_user(request, f"{queryset.count()} deliveries queued again", messages.SUCCESS)
