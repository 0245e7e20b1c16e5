from typing import Any

from django.contrib import admin
from django.db.models import Model, QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html

from compliance_site.monitoring.models import (
    FlagOrigin,
    MonitoredSource,
    ReviewFlag,
    SourceSnapshot,
)
from compliance_site.monitoring.review_cache import review_report_forget
from compliance_site.monitoring.services import (
    flags_clear,
    sources_retry,
)


@admin.register(ReviewFlag)
class ReviewFlagAdmin(admin.ModelAdmin):
    list_display = ["state_abbreviation", "reason", "origin", "created_at", "cleared_at"]
    list_filter = ["origin", ("cleared_at", admin.EmptyFieldListFilter)]
    search_fields = ["state_abbreviation", "reason"]
    fields = [
        "state_abbreviation",
        "reason",
        "origin",
        "what_changed",
        "created_by",
        "created_at",
        "cleared_at",
    ]
    readonly_fields = ["origin", "what_changed", "created_by", "created_at", "cleared_at"]
    actions = ["clear_flags"]

    @admin.display(description="What changed")
    def what_changed(self, obj: ReviewFlag) -> str:
        if obj.snapshot_id is None:
            return "-"
        url = reverse("admin:monitoring_sourcesnapshot_change", args=[obj.snapshot_id])
        return format_html('<a href="{}">The page as fetched, and its diff</a>', url)

    def save_model(self, request: HttpRequest, obj: ReviewFlag, form: Any, change: bool) -> None:
        if not change:
            obj.origin = FlagOrigin.EDITOR
            obj.created_by = request.user.get_username()
            obj.created_at = timezone.now()
        obj.state_abbreviation = obj.state_abbreviation.upper()
        super().save_model(request, obj, form, change)
        review_report_forget()

    @admin.action(description="Clear the selected flags (the state was re-verified)")
    def clear_flags(self, request: HttpRequest, queryset: QuerySet[ReviewFlag]) -> None:
        cleared = flags_clear(
            flags=list(queryset), reason=f"Cleared by {request.user.get_username()} in admin."
        )
        self.message_user(request, f"{cleared} flags cleared.")


@admin.register(SourceSnapshot)
class SourceSnapshotAdmin(admin.ModelAdmin):
    list_display = ["state_abbreviation", "url", "fetched_at", "successful", "error"]
    list_filter = ["successful", "state_abbreviation"]
    fields = [
        "state_abbreviation",
        "url",
        "fetched_at",
        "successful",
        "status_code",
        "error",
        "content_hash",
        "diff_shown",
        "text_shown",
    ]
    readonly_fields = ["diff_shown", "text_shown"]

    @admin.display(description="Diff against the previous successful fetch")
    def diff_shown(self, obj: SourceSnapshot) -> str:
        if not obj.diff:
            return "No diff: the page did not change, or it has no text to compare."
        return format_html('<pre class="snapshot-diff">{}</pre>', obj.diff)

    @admin.display(description="Normalised text")
    def text_shown(self, obj: SourceSnapshot) -> str:
        if not obj.text:
            return "Not kept (a later fetch holds the current text, or the page has none)."
        return format_html('<pre class="snapshot-text">{}</pre>', obj.text)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False


@admin.register(MonitoredSource)
class MonitoredSourceAdmin(admin.ModelAdmin):
    """Where an operator sees a source that fails: why, how often in a row, and when the
    monitor tries it again."""

    list_display = [
        "state_abbreviation",
        "name",
        "short_url",
        "consecutive_failures",
        "last_error",
        "last_success_at",
        "next_attempt_at",
    ]
    list_filter = ["state_abbreviation", ("last_error", admin.EmptyFieldListFilter)]
    search_fields = ["state_abbreviation", "name", "url", "last_error"]
    ordering = ["-consecutive_failures", "state_abbreviation"]
    actions = ["retry_sources"]

    @admin.display(description="URL")
    def short_url(self, obj: MonitoredSource) -> str:
        return obj.url if len(obj.url) <= 100 else f"{obj.url[:100]}… ({len(obj.url)} chars)"

    @admin.action(description="Try the selected sources at the next run (end their backoff)")
    def retry_sources(self, request: HttpRequest, queryset: QuerySet[MonitoredSource]) -> None:
        count = sources_retry(sources=list(queryset))
        self.message_user(request, f"{count} sources will be tried at the next run.")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False
