"""Every change to a token or a follow raises the account's generation, whatever made it.

The API's logout, follow and unfollow are not the only writers: an operator revoking a stolen
token from the shell, a cascade from an editor deleting a feed in the admin, or an account
deletion all change the same rows. Each process keeps copies of tokens and follows
(news_site.accounts.tokens) that stay valid while the generation does, so a change that did
not raise it would go unseen for as long as a copy lives. Django sends these signals for every
row, queryset deletes and cascades included, inside the transaction that makes the change."""

from typing import Any

from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from news_site.accounts.generation import account_changed
from news_site.accounts.models import ApiToken, Follow


@receiver(post_delete, sender=ApiToken)
@receiver(post_delete, sender=Follow)
def row_deleted(sender: type, instance: ApiToken | Follow, **kwargs: Any) -> None:
    account_changed(account_id=instance.account_id)


@receiver(post_save, sender=ApiToken)
@receiver(post_save, sender=Follow)
def row_saved(sender: type, instance: ApiToken | Follow, created: bool, **kwargs: Any) -> None:
    # A new token is not a change to any copy (nobody holds one of it); a new follow is.
    if created and sender is ApiToken:
        return
    account_changed(account_id=instance.account_id)
