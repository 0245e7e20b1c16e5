"""The editors' admin: sources with their health, entries and their summaries, guides."""

import functools
from typing import Any, cast

import markdown
from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db import models, transaction
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import URLPattern, path
from django.utils import timezone
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from news_site.news import discovery, opml
from news_site.news.admin_review import SummaryReviewAdmin
from news_site.news.discovery import DiscoveryProblem
from news_site.news.fetch_problems import fetch_problem_shown
from news_site.news.generation import content_changed
from news_site.news.health import source_health
from news_site.news.models import (
    Entry,
    Feed,
    FeedKind,
    ProductGuide,
    SummaryState,
    Tag,
)
from news_site.news.summaries import entries_resummarise_request
from news_site.news.tasks import feed_fetch_task

# The review queue's admin lives in its own module; admin's autodiscovery imports only this one.
__all__ = ["SummaryReviewAdmin"]

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


_DISCOVERY_MESSAGES = {
    DiscoveryProblem.INVALID_URL: _("The address is not a complete http(s) address."),
    DiscoveryProblem.BLOCKED_ADDRESS: _(
        "The address leads to a local or private network (%(detail)s). The service fetches "
        "from public addresses only; the operator can allow private networks with the "
        "FETCH_ALLOW_PRIVATE_NETWORKS setting."
    ),
    DiscoveryProblem.UNREACHABLE: _(
        "The address could not be reached (%(detail)s). Check it and try again."
    ),
    DiscoveryProblem.HTTP_ERROR: _("The website answered with an error (%(detail)s)."),
    DiscoveryProblem.NO_FEED: _(
        "No RSS or Atom feed was found: the address is neither a feed nor a page that links "
        "to one. Paste the feed's own address."
    ),
}


class FeedAddForm(forms.ModelForm):
    """Adding a source takes an address alone, the feed's or any page of the site: the feed,
    its title and its site are found from it (news.discovery)."""

    url = forms.CharField(
        label=_("Address"),
        max_length=2000,
        help_text=_("The feed's address or the website's, e.g. https://www.macrumors.com/."),
    )

    class Meta:
        model = Feed
        fields = ("url", "language", "kind")

    def clean(self) -> dict[str, Any]:
        # ModelForm.clean answers the cleaned data (None only from a Form that overrides it).
        cleaned = cast(dict[str, Any], super().clean())
        address = (cleaned.get("url") or "").strip()
        if address and "://" not in address:
            address = f"https://{address}"
        if not address:
            return cleaned
        try:
            found = discovery.feed_discover(url=address)
        except discovery.DiscoveryError as exc:
            message = _DISCOVERY_MESSAGES[exc.problem] % {"detail": exc.detail}
            raise forms.ValidationError({"url": message}) from exc
        cleaned["url"] = found.url
        self.instance.title = found.title or found.url
        self.instance.site_url = found.site_url
        return cleaned


def _fetch_soon(feeds: list[Feed]) -> None:
    # After the commit: the worker must find the row the editor just saved.
    for feed in feeds:
        if feed.kind == FeedKind.ARTICLES:
            transaction.on_commit(functools.partial(feed_fetch_task.enqueue, feed.pk))


def _problem_rows(feeds: list[Feed]) -> list[tuple[Feed, str]]:
    return [(feed, fetch_problem_shown(feed.last_error)) for feed in feeds]


class OpmlUploadForm(forms.Form):
    file = forms.FileField(label=_("OPML file"))


@admin.register(Feed)
class FeedAdmin(NewsAdmin):
    # Kind and language are filters: the columns left fit a 1280 px screen.
    list_display = (
        "title",
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
        "last_error_shown",
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
            _("Health"),
            {
                "fields": (
                    "last_outcome",
                    "last_fetched_at",
                    "last_http_status",
                    "error_count",
                    "last_error_shown",
                    "failing_since",
                    "paused_at",
                    "next_check_at",
                    "check_interval_seconds",
                )
            },
        ),
        (
            _("Conditional fetching"),
            {"classes": ("collapse",), "fields": ("etag", "last_modified", "body_hash")},
        ),
    )
    actions = ("fetch_now",)

    def get_form(
        self, request: HttpRequest, obj: Feed | None = None, change: bool = False, **kwargs: Any
    ) -> Any:
        if obj is None:
            kwargs["form"] = FeedAddForm
        return super().get_form(request, obj, change=change, **kwargs)

    def get_fieldsets(self, request: HttpRequest, obj: Feed | None = None) -> Any:
        if obj is None:
            return ((None, {"fields": FeedAddForm.Meta.fields}),)
        return super().get_fieldsets(request, obj)

    def save_model(self, request: HttpRequest, obj: Feed, form: Any, change: bool) -> None:
        super().save_model(request, obj, form, change)
        if not change:
            _fetch_soon([obj])
            self.message_user(
                request,
                gettext(
                    "The source “%(title)s” was found (%(url)s) and is being fetched now; "
                    "reload the page in a moment to see the outcome."
                )
                % {"title": obj.title, "url": obj.url},
                messages.SUCCESS,
            )

    def get_urls(self) -> list[URLPattern]:
        own = [
            path(
                "import-opml/",
                self.admin_site.admin_view(self.import_opml_view),
                name="news_feed_import_opml",
            ),
            path(
                "health/",
                self.admin_site.admin_view(self.health_view),
                name="news_feed_health",
            ),
            path(
                "export-opml/",
                self.admin_site.admin_view(self.export_opml_view),
                name="news_feed_export_opml",
            ),
        ]
        return own + super().get_urls()

    def import_opml_view(self, request: HttpRequest) -> HttpResponse:
        if not self.has_add_permission(request):
            raise PermissionDenied
        report = None
        form = OpmlUploadForm(request.POST or None, request.FILES or None)
        if request.method == "POST" and form.is_valid():
            try:
                report = opml.opml_import(data=form.cleaned_data["file"].read())
            except opml.OpmlError as exc:
                form.add_error(
                    "file",
                    gettext("The file could not be read as OPML (%(error)s).") % {"error": exc},
                )
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": gettext("Import sources from OPML"),
            "form": form,
            "report": report,
        }
        return TemplateResponse(request, "admin/news/feed/import_opml.html", context)

    def health_view(self, request: HttpRequest) -> HttpResponse:
        if not self.has_view_permission(request):
            raise PermissionDenied
        health = source_health()
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": gettext("Source health"),
            "health": health,
            "sections": [
                (gettext("Paused"), _problem_rows(health.paused), "paused"),
                (gettext("Failing, retrying"), _problem_rows(health.failing), "failing"),
            ],
        }
        return TemplateResponse(request, "admin/news/feed/health.html", context)

    def export_opml_view(self, request: HttpRequest) -> HttpResponse:
        if not self.has_view_permission(request):
            raise PermissionDenied
        document = opml.opml_export(feeds=opml.exported_feeds(), now=timezone.now())
        response = HttpResponse(document, content_type="text/x-opml; charset=utf-8")
        response["Content-Disposition"] = 'attachment; filename="kallor.opml"'
        return response

    @admin.display(description=_("last error"))
    def last_error_shown(self, feed: Feed) -> str:
        return fetch_problem_shown(feed.last_error)

    @admin.action(description=_("Fetch now (and resume paused ones)"))
    def fetch_now(self, request: HttpRequest, queryset: QuerySet[Feed]) -> None:
        feeds = list(queryset)
        queryset.update(next_check_at=timezone.now(), paused_at=None)
        _fetch_soon(feeds)
        self.message_user(
            request,
            ngettext(
                "%(count)d source is being fetched now by the background worker (the podcast "
                "at the next run).",
                "%(count)d sources are being fetched now by the background worker (the podcast "
                "at the next run).",
                len(feeds),
            )
            % {"count": len(feeds)},
            messages.SUCCESS,
        )


@admin.register(Tag)
class TagAdmin(NewsAdmin):
    list_display = ("name", "slug")
    search_fields = ("name", "slug")
    prepopulated_fields = {"slug": ("name",)}


@admin.register(Entry)
class EntryAdmin(NewsAdmin):
    # Short headings: a list's headings do not wrap, and the models' long names
    # ("relevant för plattformen", "sammanfattningens läge") pushed the list past 1280 px.
    list_display = ("title", "feed", "listed_at", "relevant", "state", "view_count")
    list_filter = ("platform_relevant", "summary_state", "feed", "listed_at", "tags")
    list_select_related = ("feed",)
    search_fields = ("title", "summary_original", "summary_translated", "url")
    date_hierarchy = "listed_at"
    autocomplete_fields = ("tags",)
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
        # Placed on the story's page (news_site.stories.admin), where the stories are rebuilt.
        "story",
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
        "story_pinned",
        "story_error",
        "view_count",
    )
    actions = ("resummarise",)

    @admin.display(description=_("relevant"), boolean=True, ordering="platform_relevant")
    def relevant(self, entry: Entry) -> bool:
        return entry.platform_relevant

    @admin.display(description=_("summary"), ordering="summary_state")
    def state(self, entry: Entry) -> str:
        return entry.get_summary_state_display()

    def save_model(self, request: HttpRequest, obj: Entry, form, change: bool) -> None:
        # A hand-corrected summary is the editor's: later runs must not overwrite it.
        if change and any(name in form.changed_data for name in _SUMMARY_FIELDS):
            obj.summary_state = SummaryState.EDITED
        super().save_model(request, obj, form, change)

    @admin.action(description=_("Ask the model to summarise again"))
    def resummarise(self, request: HttpRequest, queryset: QuerySet[Entry]) -> None:
        count = entries_resummarise_request(entry_ids=queryset.values_list("pk", flat=True))
        self.message_user(
            request,
            ngettext(
                "%(count)d article will be summarised at the next run.",
                "%(count)d articles will be summarised at the next run.",
                count,
            )
            % {"count": count},
            messages.SUCCESS,
        )


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

    @admin.display(description=_("Preview (saved version)"))
    def preview(self, obj: ProductGuide) -> SafeString:
        # The body is escaped first, so raw HTML in a guide shows as text, never runs.
        rendered = markdown.markdown(escape(obj.body or ""), extensions=["tables", "sane_lists"])
        return mark_safe(f'<div class="markdown-preview">{rendered}</div>')  # noqa: S308
