from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "news_site.accounts"
    label = "accounts"
    verbose_name = "Konton (appar)"
