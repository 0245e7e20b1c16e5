"""The change event's shape, as /changes shows it and as webhooks deliver it.

Built from `.values()` rows by a plain function: the feed's hot path, where a DRF serializer
costs about as much as the query for a page of 100. api/serializers.py documents the same shape
in the OpenAPI schema, and a test keeps the two in step.
"""

from datetime import timedelta, timezone
from typing import Any

CHANGE_EVENT_COLUMNS = (
    "resource_type",
    "resource_key",
    "version",
    "released_at",
    "git_sha",
    "committed_at",
    "git_committed_at",
    "committed_offset_minutes",
    "committed_by",
    "change_summary",
    "source",
    "diff",
)


def change_event_shape(row: dict[str, Any]) -> dict[str, Any]:
    offset = timezone(timedelta(minutes=row["committed_offset_minutes"]))
    return {
        "resource_type": row["resource_type"],
        "resource_key": row["resource_key"],
        "version": row["version"],
        "released_at": row["released_at"].isoformat(),
        "git_sha": row["git_sha"],
        "committed_at": row["committed_at"].astimezone(offset).isoformat(),
        "git_committed_at": row["git_committed_at"].astimezone(offset).isoformat(),
        "committed_by": row["committed_by"],
        "change_summary": row["change_summary"],
        "source": row["source"],
        "diff": row["diff"],
    }
