"""Readable names for the compliance API's operations: the operationId generated clients name
their functions after (`changes_list`, not drf-spectacular's `changes_retrieve`), the one-line
summary the reference lists, and a description where the view's documentation has none.
Applied by `schema.postprocess`; a test checks that every operation has all three."""

from typing import Any

P = "/api/v1/compliance"
# (method, path) -> (operationId, summary, description used when the view gives none)
OPERATIONS: dict[tuple[str, str], tuple[str, str, str]] = {
    ("get", f"{P}/"): ("api_index", "What the API offers", ""),
    ("get", f"{P}/meta"): (
        "meta_get",
        "The dataset",
        "Jurisdictions, the current state schema version and the last publication.",
    ),
    ("get", f"{P}/states"): ("states_dataset", "Every state's current record", ""),
    ("get", f"{P}/states/{{abbr}}"): ("state_get", "One state's record", ""),
    ("get", f"{P}/states/{{abbr}}/versions"): (
        "state_versions_list",
        "A state's versions",
        "Every published version of the state's record, newest first, as change events.",
    ),
    ("get", f"{P}/states/{{abbr}}/versions/{{number}}"): (
        "state_version_get",
        "One version of a state's record",
        "The record as it was published in that version; its ETag never changes.",
    ),
    ("get", f"{P}/esa_programs"): (
        "esa_programs_list",
        "ESA programs",
        "Every state's education savings account program, where it has one.",
    ),
    ("get", f"{P}/esa_programs/{{abbr}}"): ("esa_program_get", "One state's ESA program", ""),
    ("get", f"{P}/changes"): (
        "changes_list",
        "The change feed",
        "Change events in publication order from a cursor or sync_token; poll with the "
        "sync_token of the last page.",
    ),
    ("get", f"{P}/review_flags"): ("review_flags_get", "Records due for review", ""),
    ("get", f"{P}/citations/{{abbr}}"): (
        "citations_get",
        "A state's citations",
        "The statutes and sources the state's current record cites.",
    ),
    ("get", f"{P}/webhooks"): ("webhooks_list", "The key's webhooks", ""),
    ("post", f"{P}/webhooks"): ("webhook_create", "Register a webhook", ""),
    ("get", f"{P}/webhooks/{{webhook_id}}"): (
        "webhook_get",
        "One webhook",
        "One of the calling key's webhooks (another key's is 404).",
    ),
    ("patch", f"{P}/webhooks/{{webhook_id}}"): ("webhook_update", "Change a webhook", ""),
    ("delete", f"{P}/webhooks/{{webhook_id}}"): (
        "webhook_delete",
        "Delete a webhook",
        "Deletes one of the calling key's webhooks (204).",
    ),
    ("post", f"{P}/webhooks/{{webhook_id}}/rotate_secret"): (
        "webhook_rotate_secret",
        "Rotate a webhook's secret",
        "",
    ),
    ("get", f"{P}/webhooks/{{webhook_id}}/deliveries"): (
        "webhook_deliveries_list",
        "A webhook's deliveries",
        "",
    ),
    ("post", f"{P}/deliveries/{{delivery_id}}/redeliver"): (
        "delivery_redeliver",
        "Send a delivery again",
        "",
    ),
}


def name_operations(paths: dict[str, Any]) -> None:
    for path, operations in paths.items():
        for method, operation in operations.items():
            named = OPERATIONS.get((method, path))
            if named is None:
                continue
            operation["operationId"], operation["summary"], description = named
            if not operation.get("description"):
                operation["description"] = description
