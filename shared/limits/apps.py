from django.apps import AppConfig


class LimitsConfig(AppConfig):
    name = "shared.limits"
    label = "limits"
    verbose_name = "Gränser"
