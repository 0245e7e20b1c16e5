"""The editors' admin: sources with their health, entries and their summaries, guides."""

import markdown
from django.contrib import admin, messages
from django.db import models
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from news_site.news.generation import content_changed
from news_site.news.models import (
    Entry,
    Feed,
    ProductGuide,
    Story,
    SummaryState,
    Tag,
)
from news_site.news.summaries import entries_resummarise_request

_SUMMARY_FIELDS = ("summary_original", "summary_translated")


class NewsAdmin(admin.ModelAdmin):
    # Addresses typed without a scheme are https (Django 6's default, chosen explicitly now).
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}

    # An editor's change shows in the /api/v1 lists at once, not when their pages expire.
    def save_related(self, request: HttpRequest, form, formsets, change: bool) -> None:
        super().save_related(request, form, formsets, change)
        content_changed()

    def delete_model(self, request: HttpRequest, obj: models.Model) -> None:
        super().delete_model(request, obj)
        content_changed()

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet) -> None:
        super().delete_queryset(request, queryset)
        content_changed()


@admin.register(Feed)
class FeedAdmin(NewsAdmin):
    list_display = (
        "title",
        "kind",
        "language",
        "is_active",
        "last_outcome",
        "last_fetched_at",
        "error_count",
        "next_check_at",
        "paused_at",
    )
    list_filter = ("kind", "is_active", "last_outcome", "language")
    search_fields = ("title", "url", "site_url")
    readonly_fields = (
        "last_fetched_at",
        "last_outcome",
        "last_http_status",
        "error_count",
        "last_error",
        "failing_since",
        "next_check_at",
        "check_interval_seconds",
        "etag",
        "last_modified",
        "body_hash",
        "created_at",
    )
    fieldsets = (
        (None, {"fields": ("title", "url", "site_url", "language", "kind", "is_active")}),
        (
            "Hälsa",
            {
                "fields": (
                    "last_outcome",
                    "last_fetched_at",
                    "last_http_status",
                    "error_count",
                    "last_error",
                    "failing_since",
                    "paused_at",
                    "next_check_at",
                    "check_interval_seconds",
                )
            },
        ),
        (
            "Villkorlig hämtning",
            {"classes": ("collapse",), "fields": ("etag", "last_modified", "body_hash")},
        ),
    )
    actions = ("check_now",)

    @admin.action(description="Hämta vid nästa körning (och återuppta pausade)")
    def check_now(self, request: HttpRequest, queryset: QuerySet[Feed]) -> None:
        count = queryset.update(next_check_at=timezone.now(), paused_at=None)
        self.message_user(request, f"{count} källor hämtas vid nästa körning.", messages.SUCCESS)


@admin.register(Tag)
class TagAdmin(NewsAdmin):
    list_display = ("name", "slug")
    search_fields = ("name", "slug")
    prepopulated_fields = {"slug": ("name",)}


@admin.register(Entry)
class EntryAdmin(NewsAdmin):
    list_display = (
        "title",
        "feed",
        "listed_at",
        "platform_relevant",
        "summary_state",
        "view_count",
    )
    list_filter = ("platform_relevant", "summary_state", "feed", "listed_at", "tags")
    list_select_related = ("feed",)
    search_fields = ("title", "summary_original", "summary_translated", "url")
    date_hierarchy = "listed_at"
    autocomplete_fields = ("tags",)
    raw_id_fields = ("story",)
    readonly_fields = (
        "feed",
        "guid",
        "url",
        "canonical_url",
        "published_at",
        "created_at",
        "listed_at",
        "summary_state",
        "summarised_at",
        "summary_attempts",
        "summary_error",
        "view_count",
    )
    fields = (
        "title",
        "feed",
        "url",
        "canonical_url",
        "guid",
        "published_at",
        "listed_at",
        "created_at",
        "author",
        "image_url",
        "language",
        "summary_translated",
        "summary_original",
        "summary_state",
        "resummarise_requested",
        "summarised_at",
        "summary_attempts",
        "summary_error",
        "platform_relevant",
        "tags",
        "story",
        "story_error",
        "view_count",
    )
    actions = ("resummarise",)

    def save_model(self, request: HttpRequest, obj: Entry, form, change: bool) -> None:
        # A hand-corrected summary is the editor's: later runs must not overwrite it.
        if change and any(name in form.changed_data for name in _SUMMARY_FIELDS):
            obj.summary_state = SummaryState.EDITED
        super().save_model(request, obj, form, change)

    @admin.action(description="Be modellen sammanfatta igen")
    def resummarise(self, request: HttpRequest, queryset: QuerySet[Entry]) -> None:
        count = entries_resummarise_request(entry_ids=queryset.values_list("pk", flat=True))
        self.message_user(
            request, f"{count} artiklar sammanfattas vid nästa körning.", messages.SUCCESS
        )


@admin.register(Story)
class StoryAdmin(NewsAdmin):
    list_display = ("title", "status", "updated_at")
    list_filter = ("status",)
    search_fields = ("title", "lead")
    raw_id_fields = ("predecessor",)
    prepopulated_fields = {"slug": ("title",)}


@admin.register(ProductGuide)
class ProductGuideAdmin(NewsAdmin):
    list_display = ("title", "slug", "page_type", "is_published", "updated_at")
    list_filter = ("page_type", "is_published")
    search_fields = ("title", "slug", "body")
    prepopulated_fields = {"slug": ("title",)}
    readonly_fields = ("preview",)
    fields = ("title", "slug", "page_type", "description", "is_published", "body", "preview")

    def save_model(self, request: HttpRequest, obj: ProductGuide, form, change: bool) -> None:
        obj.updated_at = timezone.now()
        super().save_model(request, obj, form, change)

    @admin.display(description="Förhandsvisning (sparad version)")
    def preview(self, obj: ProductGuide) -> SafeString:
        # The body is escaped first, so raw HTML in a guide shows as text, never runs.
        rendered = markdown.markdown(escape(obj.body or ""), extensions=["tables", "sane_lists"])
        return mark_safe(f'<div class="markdown-preview">{rendered}</div>')  # noqa: S308
