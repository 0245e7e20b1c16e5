from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class StoriesConfig(AppConfig):
    name = "news_site.stories"
    label = "stories"
    verbose_name = _("Stories")
