"""The editors' review queue of the model's work: the summaries the model wrote since an editor
last looked, newest first, with the article beside them; approve them in bulk or correct them in
place. A filter shows the entries that fell back to the offline cut, and why."""

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db import models
from django.db.models import F, Q, QuerySet
from django.http import HttpRequest
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from news_site.news.generation import content_changed
from news_site.news.models import SummaryReview, SummaryState

TO_REVIEW = "att-granska"
REVIEWED = "granskade"
OFFLINE = "offline"


class ReviewStateFilter(admin.SimpleListFilter):
    title = _("review")
    parameter_name = "visa"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [
            (TO_REVIEW, gettext("To review")),
            (REVIEWED, gettext("Reviewed")),
            (OFFLINE, gettext("Offline excerpt (the model wrote nothing)")),
        ]

    def value(self) -> str:
        # The page opens on the queue itself.
        return super().value() or TO_REVIEW

    def choices(self, changelist: Any) -> Any:
        # No "all": the three views are the whole page.
        for choice in super().choices(changelist):
            if choice["query_string"] != changelist.get_query_string(remove=[self.parameter_name]):
                yield choice

    def queryset(self, request: HttpRequest, queryset: QuerySet) -> QuerySet:
        model_written = queryset.filter(summary_state=SummaryState.TRANSLATED)
        unreviewed = Q(summary_reviewed_at__isnull=True) | Q(
            summary_reviewed_at__lt=F("summarised_at")
        )
        if self.value() == REVIEWED:
            return queryset.filter(summary_reviewed_at__isnull=False).exclude(unreviewed)
        if self.value() == OFFLINE:
            return queryset.filter(summary_state=SummaryState.EXTRACTED)
        return model_written.filter(unreviewed)


@admin.register(SummaryReview)
class SummaryReviewAdmin(admin.ModelAdmin):
    list_display = ("article", "summary_translated", "summary_original", "summarised_at", "why")
    list_display_links = None
    list_editable = ("summary_translated",)
    list_filter = (ReviewStateFilter,)
    list_select_related = ("feed",)
    list_per_page = 25
    search_fields = ("title", "summary_translated")
    ordering = ("-summarised_at", "-listed_at", "-pk")
    actions = ("approve",)
    formfield_overrides = {
        models.TextField: {"widget": forms.Textarea(attrs={"rows": 6, "cols": 34})},
        models.URLField: {"assume_scheme": "https"},
    }

    def changelist_view(self, request: HttpRequest, extra_context: Any = None) -> Any:
        # Django's "Välj ... att ändra" around this model's name reads "Välj AI-sammanfattning
        # att granska att ändra".
        context = {"title": "Granska AI-sammanfattningar", **(extra_context or {})}
        return super().changelist_view(request, extra_context=context)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description=_("article"))
    def article(self, entry: SummaryReview) -> SafeString:
        return format_html(
            '<a href="{}" target="_blank" rel="noopener">{}</a><br><small>{} · '
            '<a href="../entry/{}/change/">{}</a></small>',
            entry.url,
            entry.title,
            entry.feed.title,
            entry.pk,
            gettext("edit everything"),
        )

    @admin.display(description=_("why offline"))
    def why(self, entry: SummaryReview) -> str:
        if entry.summary_state != SummaryState.EXTRACTED:
            return ""
        return entry.summary_error or gettext("no model has summarised it yet")

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        # A correction in the queue is the editor's summary, and reviewed with it.
        if "summary_translated" in form.changed_data:
            obj.summary_state = SummaryState.EDITED
            obj.summary_reviewed_at = timezone.now()
        super().save_model(request, obj, form, change)
        content_changed()

    @admin.action(description=_("Approve the selected summaries"))
    def approve(self, request: HttpRequest, queryset: QuerySet[SummaryReview]) -> None:
        count = queryset.update(summary_reviewed_at=timezone.now())
        self.message_user(
            request,
            ngettext("%(count)d summary approved.", "%(count)d summaries approved.", count)
            % {"count": count},
            messages.SUCCESS,
        )
