from typing import Any

from django.contrib import admin, messages
from django.http import HttpRequest

from compliance_site.access.keys import api_key_create
from compliance_site.access.models import ApiKey


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    list_display = ["name", "prefix", "rate_limit_per_minute", "is_active", "created_at"]
    list_editable = ["rate_limit_per_minute", "is_active"]
    search_fields = ["name", "prefix"]
    readonly_fields = ["prefix", "created_at"]
    fields = ["name", "rate_limit_per_minute", "is_active", "prefix", "created_at"]

    def save_model(self, request: HttpRequest, obj: ApiKey, form: Any, change: bool) -> None:
        if change:
            super().save_model(request, obj, form, change)
            return
        # A new key gets its secret here; the raw value is shown once and never stored.
        key, raw_key = api_key_create(
            name=obj.name, rate_limit_per_minute=obj.rate_limit_per_minute
        )
        key.is_active = obj.is_active
        key.save(update_fields=["is_active"])
        obj.pk = key.pk
        obj.prefix = key.prefix
        obj.key_hash = key.key_hash
        obj.created_at = key.created_at
        self.message_user(
            request,
            f"The new key is shown only now; store it safely: {raw_key}",
            level=messages.WARNING,
        )
