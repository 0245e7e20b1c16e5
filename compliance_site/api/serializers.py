"""Output shapes of the compliance API (one per resource) and the query-parameter validators.

The serializers also document the responses in the OpenAPI schema, so the schema is the code.
"""

from datetime import UTC, datetime
from typing import Any, cast

from rest_framework import serializers

# The change event's shape lives with the records (webhooks deliver it too); re-exported here
# for the views.
from compliance_site.records.events import CHANGE_EVENT_COLUMNS as CHANGE_EVENT_COLUMNS
from compliance_site.records.events import change_event_shape as change_event_shape
from compliance_site.records.models import ChangeSource, ResourceType, ResourceVersion

API_VERSION = "v1"
MAX_INT = 2**31 - 1


def version_list_item_shape(row: dict[str, Any]) -> dict[str, Any]:
    return {**change_event_shape(row), "payload_schema_version": row["payload_schema_version"]}


class KeyDiffSerializer(serializers.Serializer):
    added_keys = serializers.ListField(child=serializers.CharField())
    removed_keys = serializers.ListField(child=serializers.CharField())
    changed_keys = serializers.ListField(child=serializers.CharField())


class ChangeEventSerializer(serializers.Serializer):
    resource_type = serializers.ChoiceField(choices=ResourceType.values)
    resource_key = serializers.CharField()
    version = serializers.IntegerField()
    released_at = serializers.DateField()
    git_sha = serializers.CharField()
    committed_at = serializers.DateTimeField(
        help_text="When the event counts as committed: git's committer date, but never later "
        "than its publication and never earlier than the previous event's committed_at, so it "
        "never decreases in publication order (the `since` rule loses nothing). Shown with the "
        "commit's own UTC offset; in UTC (+00:00) when the commit claims an offset of 24 hours "
        "or more, which git stores but no clock has."
    )
    git_committed_at = serializers.DateTimeField(
        help_text="The committer date the commit itself claims (the true instant git stores), "
        "with the same offset as committed_at. Whoever made the commit chose it: it may be "
        "backdated or in the future."
    )
    committed_by = serializers.CharField(help_text="The commit author.")
    change_summary = serializers.CharField(help_text="The commit message.")
    # A field named like the attribute DRF's Field keeps its source in.
    source = serializers.ChoiceField(choices=ChangeSource.values)  # type: ignore[assignment]
    diff = KeyDiffSerializer()


class VersionListItemSerializer(ChangeEventSerializer):
    """A state's version list item: the change event of that version plus its schema version."""

    payload_schema_version = serializers.CharField()


class VersionMetaSerializer(serializers.Serializer):
    api_version = serializers.CharField()
    version = serializers.IntegerField()
    released_at = serializers.DateField()
    git_sha = serializers.CharField()
    payload_schema_version = serializers.CharField(
        help_text="The state schema major this version's payload was written under; a version "
        "keeps it for good, whatever /meta's schema_version is now."
    )


def version_meta(version: ResourceVersion) -> dict:
    return {
        "api_version": API_VERSION,
        "version": version.version,
        "released_at": version.released_at.isoformat(),
        "git_sha": version.git_sha,
        "payload_schema_version": version.payload_schema_version,
    }


class EsaProgramSerializer(serializers.Serializer):
    state_abbreviation = serializers.CharField()
    state_name = serializers.CharField()
    program_name = serializers.CharField()
    amount_cents = serializers.IntegerField()
    eligibility = serializers.CharField()
    url = serializers.URLField()


def esa_program_shape(version: ResourceVersion, state_name: str) -> dict[str, Any]:
    payload = cast(dict[str, Any], version.payload)
    return {
        "state_abbreviation": version.resource_key,
        "state_name": state_name,
        "program_name": payload["program_name"],
        "amount_cents": payload["amount_cents"],
        "eligibility": payload["eligibility"],
        "url": payload["url"],
    }


class SourceUrlSerializer(serializers.Serializer):
    name = serializers.CharField()
    url = serializers.URLField()


class SnapshotSerializer(serializers.Serializer):
    url = serializers.URLField()
    fetched_at = serializers.DateTimeField()
    content_hash = serializers.CharField()
    successful = serializers.BooleanField()


class CitationSerializer(serializers.Serializer):
    state_abbreviation = serializers.CharField()
    state_name = serializers.CharField()
    source_urls = SourceUrlSerializer(many=True)
    recent_snapshots = SnapshotSerializer(many=True)


class DatasetMetadataSerializer(serializers.Serializer):
    state_count = serializers.IntegerField()
    schema_version = serializers.CharField()
    latest_snapshot_at = serializers.DateTimeField(allow_null=True)


class StaleItemSerializer(serializers.Serializer):
    abbreviation = serializers.CharField()
    name = serializers.CharField()
    yaml_path = serializers.CharField()
    last_verified_at = serializers.DateField()


class FlaggedItemSerializer(StaleItemSerializer):
    flagged_reason = serializers.CharField()
    changed_url = serializers.URLField(allow_null=True)
    changed_at = serializers.DateTimeField(allow_null=True)
    diff_url = serializers.CharField(
        allow_null=True,
        help_text="For a flag the monitor raised: the admin page (a path on this service, staff "
        "only) of the fetch that changed, with its diff against the previous one.",
    )


class ReviewReportSerializer(serializers.Serializer):
    generated_at = serializers.DateTimeField()
    flagged = FlaggedItemSerializer(many=True)
    stale = StaleItemSerializer(many=True)


# Query parameters -----------------------------------------------------------------------------


class StateReadParams(serializers.Serializer):
    version = serializers.IntegerField(
        required=False, min_value=1, max_value=MAX_INT, help_text="Pin this version (1, 2, ...)."
    )
    as_of = serializers.DateField(
        required=False,
        input_formats=["iso-8601"],
        help_text="The highest version released on or before this day. Not with `version`.",
    )

    def validate(self, attrs: dict) -> dict:
        if "version" in attrs and "as_of" in attrs:
            raise serializers.ValidationError("send either version or as_of, not both")
        return attrs


_EARLIEST = datetime.min.replace(tzinfo=UTC)
_LATEST = datetime.max.replace(tzinfo=UTC)


class ChangeFeedParams(serializers.Serializer):
    since = serializers.CharField(required=False, max_length=64)
    resource_type = serializers.ChoiceField(required=False, choices=ResourceType.values)
    cursor = serializers.CharField(
        required=False,
        max_length=512,
        trim_whitespace=False,
        help_text="meta.next_cursor of the previous page (empty: the first page).",
    )
    sync_token = serializers.CharField(
        required=False,
        max_length=512,
        trim_whitespace=False,
        help_text="meta.sync_token of an earlier sync: only events published after it, "
        "whatever their committed_at (safe against backdated commits).",
    )
    limit = serializers.IntegerField(
        required=False, default=100, min_value=1, max_value=500, help_text="Events per page."
    )

    def validate_since(self, value: str) -> datetime:
        try:
            moment = datetime.fromisoformat(value.replace(" ", "+"))
        except ValueError as exc:
            raise serializers.ValidationError(
                "since must be an ISO 8601 timestamp such as 2026-03-14T09:30:00+00:00"
            ) from exc
        # A timestamp without an offset is read as UTC.
        moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
        try:
            # Handed to the database in UTC: PostgreSQL refuses offsets beyond ±15:59, which
            # ISO 8601 (and Python) allow up to ±23:59.
            return moment.astimezone(UTC)
        except OverflowError:
            # Before year 1 or after year 9999 in UTC (0001-01-01T00:00:00+01:00): the database
            # compares in UTC, where the earliest or latest instant selects the same events.
            return _EARLIEST if moment.year == 1 else _LATEST
