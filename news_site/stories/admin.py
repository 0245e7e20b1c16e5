"""The editors' story pages: a story with its member articles, where an editor takes an article
out, moves it to another story or splits some off into a new one; merging is an action of the
story list. The corrections themselves are news_site.stories.curation; clustering's internals
(term centroid, entities, text fingerprint) are not shown, counts and dates only read."""

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.widgets import AutocompleteSelect
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from news_site.news.admin import NewsAdmin
from news_site.news.models import Entry, Story
from news_site.stories import curation

KEEP = ""
REMOVE = "remove"
SPLIT = "split"


class MemberForm(forms.ModelForm):
    """One member article of the story page, with what the editor wants done with it."""

    curation = forms.ChoiceField(
        label=_("Action"),
        required=False,
        choices=[
            (KEEP, _("Keep")),
            (REMOVE, _("Take out of the story")),
            (SPLIT, _("Split off into a new story")),
        ],
    )
    move_to = forms.ModelChoiceField(
        label=_("Move to"),
        queryset=Story.objects.all(),
        required=False,
        widget=AutocompleteSelect(Entry._meta.get_field("story"), admin.site),
    )

    class Meta:
        model = Entry
        fields: tuple[str, ...] = ()

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        target = cleaned.get("move_to")
        if target is not None and cleaned.get("curation"):
            raise forms.ValidationError(gettext("Choose either an action or a story to move to."))
        if target is not None and target.pk == self.instance.story_id:
            raise forms.ValidationError(gettext("The article is already in this story."))
        return cleaned


class MemberInline(admin.TabularInline):
    model = Entry
    fk_name = "story"
    form = MemberForm
    fields = ("article", "source", "listed_at", "curation", "move_to")
    readonly_fields = ("article", "source", "listed_at")
    extra = 0
    max_num = 0
    can_delete = False
    verbose_name = _("article in the story")
    verbose_name_plural = _("articles in the story (newest first)")

    def get_queryset(self, request: HttpRequest) -> QuerySet[Entry]:
        return super().get_queryset(request).select_related("feed").order_by("-listed_at", "-id")

    @admin.display(description=_("article"))
    def article(self, entry: Entry) -> SafeString:
        link = reverse("admin:news_entry_change", args=[entry.pk])
        return format_html('<a href="{}">{}</a>', link, entry.title)

    @admin.display(description=_("source"))
    def source(self, entry: Entry) -> str:
        return entry.feed.title


def _target_of(stories: list[Story]) -> Story:
    # The story most articles are already in keeps its page and address.
    return max(stories, key=lambda story: (story.entries_count, -story.pk))


@admin.register(Story)
class StoryAdmin(NewsAdmin):
    list_display = ("title", "status", "entries_count", "source_count", "updated_at")
    list_filter = ("status",)
    search_fields = ("title", "lead")
    raw_id_fields = ("predecessor",)
    prepopulated_fields = {"slug": ("title",)}
    fields = (
        "title",
        "slug",
        "lead",
        "body",
        "predecessor",
        "status",
        "entries_count",
        "source_count",
        "first_entry_published_at",
        "last_entry_published_at",
        "updated_at",
        "written_by_model",
    )
    readonly_fields = (
        "status",
        "entries_count",
        "source_count",
        "first_entry_published_at",
        "last_entry_published_at",
        "updated_at",
        "written_by_model",
    )
    inlines = (MemberInline,)
    actions = ("merge",)

    def save_formset(self, request: HttpRequest, form: Any, formset: Any, change: bool) -> None:
        if formset.model is not Entry:
            super().save_formset(request, form, formset, change)
            return
        # Nothing of the rows is saved as is (the curation module moves them); saving without
        # commit records what changed for the admin's history.
        formset.save(commit=False)
        story: Story = form.instance
        removed: list[int] = []
        split: list[int] = []
        moves: dict[Story, list[int]] = {}
        for member in formset.forms:
            data = member.cleaned_data
            if data.get("move_to") is not None:
                moves.setdefault(data["move_to"], []).append(member.instance.pk)
            elif data.get("curation") == REMOVE:
                removed.append(member.instance.pk)
            elif data.get("curation") == SPLIT:
                split.append(member.instance.pk)
        if split:
            new = curation.story_split(story=story, entry_ids=split)
            self.message_user(
                request,
                ngettext(
                    "%(count)d article was split off into “%(story)s”.",
                    "%(count)d articles were split off into “%(story)s”.",
                    len(split),
                )
                % {"count": len(split), "story": new.title},
                messages.SUCCESS,
            )
        for target, ids in moves.items():
            curation.entries_move(entry_ids=ids, story=target)
            self.message_user(
                request,
                ngettext(
                    "%(count)d article was moved to “%(story)s”.",
                    "%(count)d articles were moved to “%(story)s”.",
                    len(ids),
                )
                % {"count": len(ids), "story": target.title},
                messages.SUCCESS,
            )
        if removed:
            curation.entries_move(entry_ids=removed, story=None)
            self.message_user(
                request,
                ngettext(
                    "%(count)d article was taken out of the story; clustering does not put it "
                    "back.",
                    "%(count)d articles were taken out of the story; clustering does not put "
                    "them back.",
                    len(removed),
                )
                % {"count": len(removed)},
                messages.SUCCESS,
            )

    def response_change(self, request: HttpRequest, obj: Story) -> Any:
        # A story whose last articles the editor moved out is gone: back to the list.
        if not Story.objects.filter(pk=obj.pk).exists():
            self.message_user(
                request, gettext("The story is empty and was removed."), messages.INFO
            )
            return self.response_post_save_change(request, obj)
        return super().response_change(request, obj)

    @admin.action(description=_("Merge the selected stories"))
    def merge(self, request: HttpRequest, queryset: QuerySet[Story]) -> None:
        stories = list(queryset)
        try:
            target = _target_of(stories)
            merged = curation.stories_merge(target=target, others=stories)
        except curation.CurationError as exc:
            self.message_user(request, str(exc), messages.ERROR)
            return
        target.refresh_from_db()
        self.message_user(
            request,
            ngettext(
                "%(count)d story was merged into “%(story)s”.",
                "%(count)d stories were merged into “%(story)s”.",
                merged,
            )
            % {"count": merged, "story": target.title},
            messages.SUCCESS,
        )
