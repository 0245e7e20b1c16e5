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

from news_site.news.admin import NewsAdmin
from news_site.news.models import Entry, Story
from news_site.stories import curation

KEEP = ""
REMOVE = "remove"
SPLIT = "split"


class MemberForm(forms.ModelForm):
    """One member article of the story page, with what the editor wants done with it."""

    curation = forms.ChoiceField(
        label="Åtgärd",
        required=False,
        choices=[
            (KEEP, "Behåll"),
            (REMOVE, "Ta ut ur nyhetstråden"),
            (SPLIT, "Dela ut till en ny nyhetstråd"),
        ],
    )
    move_to = forms.ModelChoiceField(
        label="Flytta till",
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
            raise forms.ValidationError(
                "Välj antingen en åtgärd eller en nyhetstråd att flytta till."
            )
        if target is not None and target.pk == self.instance.story_id:
            raise forms.ValidationError("Artikeln finns redan i den här nyhetstråden.")
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
    verbose_name = "artikel i nyhetstråden"
    verbose_name_plural = "artiklar i nyhetstråden (nyast först)"

    def get_queryset(self, request: HttpRequest) -> QuerySet[Entry]:
        return super().get_queryset(request).select_related("feed").order_by("-listed_at", "-id")

    @admin.display(description="artikel")
    def article(self, entry: Entry) -> SafeString:
        link = reverse("admin:news_entry_change", args=[entry.pk])
        return format_html('<a href="{}">{}</a>', link, entry.title)

    @admin.display(description="källa")
    def source(self, entry: Entry) -> str:
        return entry.feed.title


def _articles(count: int) -> str:
    return f"{count} artikel" if count == 1 else f"{count} artiklar"


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
                request, f"{_articles(len(split))} delades ut till ”{new.title}”.", messages.SUCCESS
            )
        for target, ids in moves.items():
            curation.entries_move(entry_ids=ids, story=target)
            self.message_user(
                request, f"{_articles(len(ids))} flyttades till ”{target.title}”.", messages.SUCCESS
            )
        if removed:
            curation.entries_move(entry_ids=removed, story=None)
            self.message_user(
                request,
                f"{_articles(len(removed))} togs ut ur nyhetstråden; klustringen lägger inte "
                "tillbaka dem.",
                messages.SUCCESS,
            )

    def response_change(self, request: HttpRequest, obj: Story) -> Any:
        # A story whose last articles the editor moved out is gone: back to the list.
        if not Story.objects.filter(pk=obj.pk).exists():
            self.message_user(request, "Nyhetstråden är tom och togs bort.", messages.INFO)
            return self.response_post_save_change(request, obj)
        return super().response_change(request, obj)

    @admin.action(description="Slå ihop valda nyhetstrådar")
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
            f"{merged} nyhetstrådar slogs ihop med ”{target.title}”.",
            messages.SUCCESS,
        )
