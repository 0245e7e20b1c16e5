"""Webhooks in the admin: endpoints with their state (a disabled one says why), registered
and rotated the way the API does it (the secret shown once, in the message after the save or
the rotation, never on a page), and the delivery log with a redeliver action."""

from typing import Any

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone

from compliance_site.access.models import ApiKey
from compliance_site.records.models import ResourceType
from compliance_site.webhooks import services
from compliance_site.webhooks.models import WebhookDelivery, WebhookEndpoint


class WebhookEndpointAddForm(forms.ModelForm):
    url = forms.URLField(max_length=2000, assume_scheme="https")
    resource_types = forms.MultipleChoiceField(
        choices=ResourceType.choices, widget=forms.CheckboxSelectMultiple
    )

    class Meta:
        model = WebhookEndpoint
        fields = ["api_key", "url", "resource_types"]

    def clean_url(self) -> str:
        url: str = self.cleaned_data["url"]
        try:
            services.webhook_url_check(url=url, allow_private=settings.FETCH_ALLOW_PRIVATE_NETWORKS)
        except services.WebhookRefused as exc:
            raise forms.ValidationError(str(exc)) from exc
        return url

    def clean_api_key(self) -> ApiKey:
        key: ApiKey = self.cleaned_data["api_key"]
        if WebhookEndpoint.objects.filter(api_key=key).count() >= services.MAX_ENDPOINTS_PER_KEY:
            raise forms.ValidationError(
                f"this key has {services.MAX_ENDPOINTS_PER_KEY} webhooks, the most it may have"
            )
        return key


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
    actions = ["enable", "rotate_secret"]

    def get_form(
        self,
        request: HttpRequest,
        obj: WebhookEndpoint | None = None,
        change: bool = False,
        **kwargs: Any,
    ) -> type[forms.ModelForm]:
        if obj is None:
            kwargs["form"] = WebhookEndpointAddForm
        return super().get_form(request, obj, change=change, **kwargs)

    # Any: the stubs' return type is a private alias a list[str] is not compatible with.
    def get_fields(self, request: HttpRequest, obj: WebhookEndpoint | None = None) -> Any:
        return WebhookEndpointAddForm.Meta.fields if obj is None else self.readonly_fields

    def get_readonly_fields(
        self, request: HttpRequest, obj: WebhookEndpoint | None = None
    ) -> list[str] | tuple[str, ...]:
        return [] if obj is None else self.readonly_fields

    def save_model(
        self, request: HttpRequest, obj: WebhookEndpoint, form: Any, change: bool
    ) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        try:
            endpoint, secret = services.webhook_create(
                api_key=form.cleaned_data["api_key"],
                url=form.cleaned_data["url"],
                resource_types=form.cleaned_data["resource_types"],
                allow_private=settings.FETCH_ALLOW_PRIVATE_NETWORKS,
            )
        except (services.WebhookRefused, services.WebhookLimitReached) as exc:
            # Raced past the form's checks; nothing was saved.
            self.message_user(request, str(exc), messages.ERROR)
            return
        obj.pk = endpoint.pk
        self.message_user(
            request,
            f"The signing secret is shown only now; give it to the key's owner: {secret}",
            messages.WARNING,
        )

    @admin.action(description="Rotate the signing secret (shown once)")
    def rotate_secret(self, request: HttpRequest, queryset: QuerySet[WebhookEndpoint]) -> None:
        for endpoint in queryset:
            secret = services.webhook_rotate_secret(endpoint=endpoint)
            self.message_user(
                request, f"New secret of webhook {endpoint.pk}: {secret}", messages.WARNING
            )

    @admin.action(description="Re-enable (waiting deliveries are sent, in order)")
    def enable(self, request: HttpRequest, queryset: QuerySet[WebhookEndpoint]) -> None:
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

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(
        self, request: HttpRequest, obj: WebhookDelivery | None = None
    ) -> bool:
        return False

    @admin.action(description="Redeliver")
    def redeliver(self, request: HttpRequest, queryset: QuerySet[WebhookDelivery]) -> None:
        now = timezone.now()
        for delivery in queryset:
            services.delivery_redeliver(delivery=delivery, now=now)
        self.message_user(request, f"{queryset.count()} deliveries queued again", messages.SUCCESS)
