from django.contrib import admin
from django.db.models import Model
from django.http import HttpRequest

from compliance_site.records.models import ReindexProblem, ReindexRun, ResourceVersion


class ReadOnlyAdmin(admin.ModelAdmin):
    """Published data is written only by reindex; admin shows it and changes nothing."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False


@admin.register(ResourceVersion)
class ResourceVersionAdmin(ReadOnlyAdmin):
    list_display = [
        "resource_type",
        "resource_key",
        "version",
        "released_at",
        "committed_at",
        "git_committed_at",
        "payload_schema_version",
        "git_sha",
        "committed_by",
        "source",
    ]
    list_filter = ["resource_type", "source", "payload_schema_version"]
    search_fields = ["resource_key", "git_sha", "change_summary"]
    ordering = ["-sequence"]
    list_select_related = False


@admin.register(ReindexProblem)
class ReindexProblemAdmin(ReadOnlyAdmin):
    list_display = ["path", "commit_sha", "schema_path", "message", "detected_at"]


@admin.register(ReindexRun)
class ReindexRunAdmin(ReadOnlyAdmin):
    list_display = [
        "finished_at",
        "outcome",
        "commits_read",
        "versions_published",
        "invalid_versions",
        "invalid_files",
    ]
    list_filter = ["outcome"]
    ordering = ["-finished_at"]
