from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class AccountsConfig(AppConfig):
    name = "news_site.accounts"
    label = "accounts"
    verbose_name = _("Accounts (apps)")

    def ready(self) -> None:
        # Connects the receivers that keep the account generation in step with every change.
        from news_site.accounts import signals  # noqa: F401
