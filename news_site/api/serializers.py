"""Shapes of /api/v1: query parameters in, resources out. One shape per resource."""

import functools
import re
from datetime import tzinfo
from typing import Any, cast

from django.conf import settings
from django.urls import reverse
from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from news_site.accounts.services import EMAIL_MAX_LENGTH, email_normalize
from news_site.api.cursors import MAX_CURSOR_LENGTH
from news_site.news.cleaning import URL_MAX_LENGTH, clean_url
from news_site.news.entry_rows import EntryRow, TagRef, entry_tag_refs
from news_site.news.models import Entry, Story
from news_site.podcasts.identifiers import EPISODE_ID_PATTERN

LANGUAGES = ["sv", "en"]


class CleanURLField(serializers.CharField):
    """A stored URL as an absolute http(s) URI, or "" (rows may predate ingest's cleaning)."""

    def to_representation(self, value: str) -> str:
        return clean_url(value)


@extend_schema_field(OpenApiTypes.URI)
class SafeURLField(CleanURLField):
    """A URL that is always there (an entry's link): declared as `format: uri`."""


# Query parameters ------------------------------------------------------------------------


class PageParams(serializers.Serializer):
    page = serializers.IntegerField(min_value=1, max_value=10_000, default=1)
    per_page = serializers.IntegerField(min_value=1, max_value=100, default=20)
    # Checked against the list by news_site.api.cursors when the page is read.
    cursor = serializers.CharField(required=False, max_length=MAX_CURSOR_LENGTH)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        # page=1 is every page number's default (generated clients send it with a cursor).
        if attrs.get("cursor") and attrs["page"] != 1:
            raise serializers.ValidationError("page and cursor are exclusive: send one")
        return attrs


class ListParams(PageParams):
    lang = serializers.ChoiceField(choices=LANGUAGES, default="sv")


class EntryListParams(ListParams):
    sort = serializers.ChoiceField(choices=["latest", "popular"], default="latest")


class LangParams(serializers.Serializer):
    lang = serializers.ChoiceField(choices=LANGUAGES, default="sv")


class SearchParams(serializers.Serializer):
    q = serializers.CharField(max_length=200, trim_whitespace=True)
    limit = serializers.IntegerField(min_value=1, max_value=50, default=20)


class EpisodeParams(serializers.Serializer):
    include_transcript = serializers.BooleanField(default=False)


# Request bodies --------------------------------------------------------------------------


class LoginRequest(serializers.Serializer):
    provider = serializers.ChoiceField(choices=["email", "apple", "google"])
    email = serializers.EmailField(
        required=False, max_length=EMAIL_MAX_LENGTH, help_text="provider=email."
    )
    code = serializers.RegexField(
        r"^[0-9]{6}$",
        required=False,
        help_text="provider=email, second call: the six-digit code from the email.",
    )
    id_token = serializers.CharField(
        required=False, max_length=8192, help_text="provider=apple or google: the ID token."
    )

    def validate_email(self, value: str) -> str:
        # Normalising may lengthen an address (NFKC expands some characters); what is stored
        # must still fit.
        if len(email_normalize(value)) > EMAIL_MAX_LENGTH:
            raise serializers.ValidationError(
                f"Ensure this field has no more than {EMAIL_MAX_LENGTH} characters."
            )
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs["provider"] == "email" and "email" not in attrs:
            raise serializers.ValidationError({"email": "required with provider=email"})
        if attrs["provider"] != "email" and "id_token" not in attrs:
            raise serializers.ValidationError({"id_token": "required with this provider"})
        return attrs


# The two shapes of a login body, for the schema only: as one object with optional fields the
# schema would call `{"provider": "apple"}` valid, which LoginRequest rightly refuses.
# Named without "Request": drf-spectacular adds it to request components (COMPONENT_SPLIT_REQUEST),
# so these are EmailLoginRequest and IdTokenLoginRequest in the schema.
class EmailLogin(serializers.Serializer):
    provider = serializers.ChoiceField(choices=["email"])
    email = serializers.EmailField(max_length=EMAIL_MAX_LENGTH)
    code = serializers.RegexField(
        r"^[0-9]{6}$",
        required=False,
        help_text="Second call: the six-digit code from the email.",
    )


class IdTokenLogin(serializers.Serializer):
    provider = serializers.ChoiceField(choices=["apple", "google"])
    id_token = serializers.RegexField(
        r"^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$",
        max_length=8192,
        help_text="The provider's ID token (a JWT).",
    )


# Resources -------------------------------------------------------------------------------


class FeedRefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    title = serializers.CharField()


class TagRefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()


class OriginalContentSerializer(serializers.Serializer):
    language = serializers.CharField(help_text="The source's language (ISO 639-1).")
    title = serializers.CharField()
    summary = serializers.CharField(help_text="Summary or excerpt in the source language.")


class TranslatedContentSerializer(serializers.Serializer):
    language = serializers.ChoiceField(choices=LANGUAGES, help_text="The requested `lang`.")
    summary = serializers.CharField(
        allow_blank=True,
        help_text="The summary in `lang`; empty while none exists in that language.",
    )


class ContentSerializer(serializers.Serializer):
    original = OriginalContentSerializer()
    translated = TranslatedContentSerializer()


# A URL that clean_url returns as it is: http(s), a host without port or user, then only
# characters that iri_to_uri keeps and that no client refuses (its _URI_UNSAFE). Ingest stores
# URLs so; the whole of clean_url (about a fifth of a page's serializing) is left for the rest.
_CLEAN_URL = re.compile(r"https?://[A-Za-z0-9.-]+(?:[/?#][A-Za-z0-9._~!$&'()*+,;=:@/%?#-]*)?")


def shown_url(value: str) -> str:
    """clean_url(value), without its work for a URL already clean."""
    if len(value) <= URL_MAX_LENGTH and _CLEAN_URL.fullmatch(value):
        return value
    return clean_url(value)


def datetimes_shown() -> serializers.DateTimeField:
    """DRF's DateTimeField bound to the request's time zone, for every date of a list: an
    unbound one asks for the current time zone once per value, about a tenth of the CPU of a
    page of 50 entries made anew (docs/api-performance.md)."""
    return _datetimes_in(timezone.get_current_timezone() if settings.USE_TZ else None)


@functools.cache
def _datetimes_in(zone: tzinfo | None) -> serializers.DateTimeField:
    return serializers.DateTimeField(default_timezone=zone)


def summary_in(row: EntryRow, lang: str) -> str:
    """The summary in `lang`: the Swedish one (sv), or the source's own when it is English."""
    if lang == "sv":
        return row["summary_translated"]
    return row["summary_original"] if row["language"].startswith("en") else ""


def entry_representation(
    row: EntryRow, tags: list[TagRef], lang: str, datetimes: serializers.DateTimeField
) -> dict[str, Any]:
    """What EntrySerializer declares, built by hand: DRF's generic field machinery (a bound
    field per attribute, per entry) cost most of the CPU of a 50-entry page. The one place an
    entry's JSON is made, for a list's rows and for a model alike; the output is the same,
    field by field and type by type, as the declared fields would give
    (tests/news/api/test_entry_representation.py compares both)."""
    return {
        "id": row["id"],
        # Rows may predate ingest's cleaning: the declared fields' rule, by hand.
        "url": shown_url(row["url"]),
        "main_image_url": shown_url(row["image_url"]),
        "published_at": datetimes.to_representation(row["published"]),
        "source_count": int(row["source_count"]),
        "click_count": int(row["view_count"]),
        "popularity_score": float(row["view_count"]),
        "platform_relevant": bool(row["platform_relevant"]),
        "feed": {"id": row["feed_id"], "title": row["feed_title"]},
        "content": {
            "original": {
                "language": row["language"],
                "title": row["title"],
                "summary": row["summary_original"],
            },
            "translated": {"language": lang, "summary": summary_in(row, lang)},
        },
        "tags": tags,
    }


def _model_representation(entry: Entry, lang: str) -> dict[str, Any]:
    # The prefetched tags (selectors fetch them ordered); .all() reuses that cache.
    tags: list[TagRef] = [{"id": tag.pk, "name": tag.name} for tag in entry.tags.all()]
    return entry_representation(_entry_row(entry), tags, lang, datetimes_shown())


def _entry_row(entry: Entry) -> EntryRow:
    """A model's values as the row a list reads (news.entry_rows.EntryListing)."""
    return {
        "id": entry.pk,
        "url": entry.url,
        "image_url": entry.image_url,
        "language": entry.language,
        "title": entry.title,
        "summary_original": entry.summary_original,
        "summary_translated": entry.summary_translated,
        # Older records have no publication time; when we first listed them stands in.
        "published": entry.published_at or entry.listed_at,
        "listed_at": entry.listed_at,
        "platform_relevant": entry.platform_relevant,
        "view_count": entry.view_count,
        "source_count": entry.source_count,
        "feed_id": entry.feed_id,
        "feed_title": entry.feed.title,
    }


class EntryListSerializer(serializers.ListSerializer):
    """Entries as models (a detail, a search, a story's entries) or, for the pages of the
    lists, as the rows of news.entry_rows.EntryListing, whose tags are read here in one query
    (as prefetch_related would have when the page was read)."""

    def to_representation(self, data: Any) -> list[dict[str, Any]]:
        items = list(data)
        lang = self.context.get("lang", "sv")
        if not items or not isinstance(items[0], dict):
            return [_model_representation(entry, lang) for entry in items]
        tags = entry_tag_refs(entry_ids=[row["id"] for row in items])
        datetimes = datetimes_shown()
        return [
            entry_representation(row, tags.get(row["id"], []), lang, datetimes) for row in items
        ]


class EntrySerializer(serializers.Serializer):
    # The declared fields are the schema; entry_representation builds the output.
    id = serializers.IntegerField()
    url = SafeURLField()
    main_image_url = CleanURLField(source="image_url", help_text="Empty when none.")
    published_at = serializers.DateTimeField(read_only=True)
    source_count = serializers.IntegerField()
    click_count = serializers.IntegerField(
        source="view_count", help_text="Deprecated: article views (the entry detail endpoint)."
    )
    popularity_score = serializers.FloatField(
        source="view_count", help_text="What `sort=popular` orders by: article views."
    )
    platform_relevant = serializers.BooleanField()
    feed = FeedRefSerializer()
    content = ContentSerializer(read_only=True)
    tags = TagRefSerializer(many=True)

    class Meta:
        list_serializer_class = EntryListSerializer

    def to_representation(self, entry: Entry) -> dict[str, Any]:
        return _model_representation(entry, self.context.get("lang", "sv"))


class FeedSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    title = serializers.CharField()
    site_url = serializers.CharField()
    language = serializers.CharField()
    entries_count = serializers.IntegerField()
    is_following = serializers.SerializerMethodField()

    def get_is_following(self, feed) -> bool:
        return feed.pk in self.context.get("followed", ())

    # By hand, as EntrySerializer does, with the same output as the declared fields.
    def to_representation(self, feed) -> dict[str, Any]:
        return {
            "id": feed.pk,
            "title": feed.title,
            "site_url": clean_url(feed.site_url),
            "language": feed.language,
            "entries_count": self.context["entries_counts"].get(feed.pk, 0),
            "is_following": self.get_is_following(feed),
        }


class TagSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    slug = serializers.CharField(help_text="The tag's identifier in paths.")
    entries_count = serializers.IntegerField()


def story_url(story: Story) -> str:
    slug = f"{story.pk}-{story.slug}" if story.slug else str(story.pk)
    return reverse("api-story", kwargs={"story_id": slug})


class StoryRefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    title = serializers.CharField()
    status = serializers.CharField()
    url = serializers.SerializerMethodField()

    def get_url(self, story: Story) -> str:
        return self.context["request"].build_absolute_uri(story_url(story))


class StorySerializer(StoryRefSerializer):
    lead = serializers.CharField()
    # A choice where StoryRefSerializer has free text: the schema lists the two values.
    status = serializers.ChoiceField(choices=["active", "dormant"])  # type: ignore[assignment]
    entries_count = serializers.IntegerField()
    first_entry_published_at = serializers.DateTimeField(allow_null=True)
    last_entry_published_at = serializers.DateTimeField(allow_null=True)
    image_url = serializers.SerializerMethodField()

    def get_image_url(self, story: Story) -> str | None:
        return story.image_url or None


class StoryDetailSerializer(StorySerializer):
    body = serializers.CharField()
    predecessor = serializers.SerializerMethodField()
    successors = serializers.SerializerMethodField()
    entries = serializers.SerializerMethodField()

    @extend_schema_field(StoryRefSerializer(allow_null=True))
    def get_predecessor(self, story: Story) -> dict | None:
        if story.predecessor is None:
            return None
        return StoryRefSerializer(story.predecessor, context=self.context).data

    @extend_schema_field(StoryRefSerializer(many=True))
    def get_successors(self, story: Story) -> list:
        refs = StoryRefSerializer(self.context["successors"], many=True, context=self.context)
        return cast(list[Any], refs.data)

    @extend_schema_field(EntrySerializer(many=True))
    def get_entries(self, story: Story) -> list:
        entries = EntrySerializer(self.context["entries"], many=True, context=self.context)
        return cast(list[Any], entries.data)


class EpisodeSerializer(serializers.Serializer):
    episode_id = serializers.RegexField(
        EPISODE_ID_PATTERN,
        help_text="The episode's id in paths (`/api/v1/podd_episodes/{episode_id}`, "
        "`/podd/{episode_id}`): lower-case letters, digits and hyphens, fixed once assigned.",
    )
    guid = serializers.CharField(
        help_text="The GUID the podcast feed gives the episode (any text). A path naming it "
        "answers 301 to the episode_id's path."
    )
    title = serializers.CharField()
    description = serializers.CharField()
    published_on = serializers.DateField(allow_null=True)
    duration_seconds = serializers.IntegerField(allow_null=True)
    page_url = serializers.CharField()
    audio_url = serializers.CharField()
    cover_url = serializers.CharField()
    cover_thumb_url = serializers.CharField()


class ChapterSerializer(serializers.Serializer):
    start_seconds = serializers.IntegerField()
    title = serializers.CharField(allow_blank=True)
    url = serializers.CharField(allow_blank=True)


class SourceSerializer(serializers.Serializer):
    title = serializers.CharField()
    url = serializers.CharField()


class EpisodeDetailSerializer(EpisodeSerializer):
    chapters = ChapterSerializer(many=True)
    sources = SourceSerializer(many=True)
    transcript_url = serializers.CharField()
    # Only with include_transcript=true: the view sets `transcript_text` on the episode then
    # (without it the view answers with EpisodeDetailWithoutTranscriptSerializer).
    transcript = serializers.CharField(
        source="transcript_text",
        allow_null=True,
        required=False,
        help_text="With include_transcript=true only: the stored transcript text, null until it "
        "has been fetched.",
    )


class EpisodeDetailWithoutTranscriptSerializer(EpisodeDetailSerializer):
    """The answer without include_transcript: no `transcript` key at all (an optional field
    that allows null would otherwise be written as null)."""

    transcript = None  # type: ignore[assignment]


class TokenSerializer(serializers.Serializer):
    token = serializers.CharField(help_text="Send as `Authorization: Bearer <token>`.")
    token_type = serializers.CharField(default="Bearer")
    expires_at = serializers.DateTimeField()
    account_id = serializers.IntegerField()


class CodeSentSerializer(serializers.Serializer):
    status = serializers.CharField(default="code_sent")
    expires_in = serializers.IntegerField(help_text="Seconds the emailed code stays valid.")


class FollowSerializer(serializers.Serializer):
    feed_id = serializers.IntegerField()
    is_following = serializers.BooleanField()


class IndexLinkSerializer(serializers.Serializer):
    rel = serializers.CharField(help_text="What the link is (`entries`, `docs`, `mcp`...).")
    href = serializers.URLField()
    title = serializers.CharField()


class ApiIndexSerializer(serializers.Serializer):
    name = serializers.CharField()
    api_version = serializers.CharField()
    links = IndexLinkSerializer(many=True)
