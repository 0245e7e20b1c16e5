from typing import Any

from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

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
        # Handed to response_add of this same request only: Django's messages would keep the
        # secret in a cookie (or the session) after the page that shows it.
        request.new_api_key = raw_key  # type: ignore[attr-defined]  # read back by getattr below

    def response_add(
        self, request: HttpRequest, obj: ApiKey, post_url_continue: str | None = None
    ) -> HttpResponse:
        raw_key = getattr(request, "new_api_key", None)
        if raw_key is None:
            return super().response_add(request, obj, post_url_continue)
        # Admin pages are never_cache (no-store) already, so the one copy of the secret stays
        # out of browser and proxy caches.
        return TemplateResponse(
            request,
            "admin/access/apikey/created.html",
            {
                **self.admin_site.each_context(request),
                "opts": self.opts,
                "key": obj,
                "raw_key": raw_key,
                "title": "API key created",
            },
        )
