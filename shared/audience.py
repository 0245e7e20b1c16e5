"""One language and one clock per audience.

The APIs (`/api/...`) answer in English, whatever the project's language: DRF's own messages
("This field is required.") stand next to ours. Pages for people (Django admin, the news
service's HTML pages) show times in the display zone (`DISPLAY_TIME_ZONE`, Europe/Stockholm)
and name the zone; machine formats (JSON, RSS, Markdown) keep UTC with its offset.
"""

import re
from collections.abc import Callable
from zoneinfo import ZoneInfo

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils import timezone, translation


class AudienceMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self.english = re.compile(settings.ENGLISH_PATHS)
        self.local_time = re.compile(settings.DISPLAY_TIME_ZONE_PATHS)
        self.zone = ZoneInfo(settings.DISPLAY_TIME_ZONE)

    def __call__(self, request: HttpRequest) -> HttpResponse:
        # override() restores the previous state afterwards: a thread that answered an API
        # call must not carry English into the next admin page it serves.
        language = "en" if self.english.match(request.path) else settings.LANGUAGE_CODE
        zone = self.zone if self.local_time.match(request.path) else None
        with translation.override(language), timezone.override(zone):
            return self.get_response(request)
