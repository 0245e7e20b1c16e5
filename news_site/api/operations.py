"""Readable names for the /api/v1 operations: the operationId generated clients name their
functions after (`list_followed_entries`, not drf-spectacular's `entries_follows_retrieve`) and
the one-line summary the reference lists. Applied by `schema.postprocess`; a test checks that
every operation has both."""

from typing import Any

# (method, path) -> (operationId, summary)
OPERATIONS: dict[tuple[str, str], tuple[str, str]] = {
    ("get", "/api/v1/"): ("api_index", "What the API offers"),
    ("post", "/api/v1/auth/login"): ("login", "Sign in (email code, Apple or Google)"),
    ("post", "/api/v1/auth/logout"): ("logout", "Sign out this token"),
    ("delete", "/api/v1/auth/account"): ("account_delete", "Delete the account"),
    ("get", "/api/v1/entries"): ("entries_list", "Latest entries"),
    ("get", "/api/v1/entries/popular"): ("entries_popular_list", "Most viewed entries"),
    ("get", "/api/v1/entries/follows"): ("entries_followed_list", "Entries of followed sources"),
    ("get", "/api/v1/entries/search"): ("entries_search", "Search entries"),
    ("get", "/api/v1/entries/{entry_id}"): ("entry_get", "One entry"),
    ("get", "/api/v1/feeds"): ("feeds_list", "Sources"),
    ("get", "/api/v1/feeds/{feed_id}"): ("feed_get", "One source"),
    ("get", "/api/v1/feeds/{feed_id}/entries"): ("feed_entries_list", "Entries of a source"),
    ("post", "/api/v1/feeds/{feed_id}/follow"): ("feed_follow", "Follow a source"),
    ("delete", "/api/v1/feeds/{feed_id}/follow"): ("feed_unfollow", "Unfollow a source"),
    ("get", "/api/v1/tags"): ("tags_list", "Tags"),
    ("get", "/api/v1/tags/{slug}"): ("tag_get", "One tag"),
    ("get", "/api/v1/tags/{slug}/entries"): ("tag_entries_list", "Entries of a tag"),
    ("get", "/api/v1/stories"): ("stories_list", "Stories"),
    ("get", "/api/v1/stories/{story_id}"): ("story_get", "One story with its entries"),
    ("get", "/api/v1/podd_episodes"): ("podd_episodes_list", "Podcast episodes"),
    ("get", "/api/v1/podd_episodes/{episode_id}"): ("podd_episode_get", "One podcast episode"),
}


def name_operations(paths: dict[str, Any]) -> None:
    for path, operations in paths.items():
        for method, operation in operations.items():
            named = OPERATIONS.get((method, path))
            if named is not None:
                operation["operationId"], operation["summary"] = named
