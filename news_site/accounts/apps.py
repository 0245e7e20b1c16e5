from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "news_site.accounts"
    label = "accounts"
    verbose_name = "Konton (appar)"

    def ready(self) -> None:
        # Connects the receivers that keep the account generation in step with every change.
        from news_site.accounts import signals  # noqa: F401
