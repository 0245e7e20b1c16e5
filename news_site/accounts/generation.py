"""The account generation: one counter per account in the shared cache that a logout, a deleted
account, a follow and an unfollow change (account_changed), so every process drops its copies
of that account's tokens and follows (news_site.accounts.tokens) on its next request."""

from shared import cache as shared_cache


def account_generation_key(account_id: int) -> str:
    return f"news:account-generation:{account_id}"


def account_generation(*, account_id: int) -> int | None:
    """The account's generation, or None when the shared cache cannot be reached."""
    return shared_cache.generation(account_generation_key(account_id))


def account_changed(*, account_id: int) -> None:
    """Tell every process that its copies of this account's tokens and follows are out of
    date."""
    shared_cache.generation_changed(account_generation_key(account_id))
