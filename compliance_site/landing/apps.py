from django.apps import AppConfig


class LandingConfig(AppConfig):
    name = "compliance_site.landing"
    label = "landing"
