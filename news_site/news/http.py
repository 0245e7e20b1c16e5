"""Response helpers every public surface uses."""

from typing import TypeVar

from django.conf import settings
from django.http import HttpResponseBase
from django.utils.cache import patch_cache_control

R = TypeVar("R", bound=HttpResponseBase)


def public(response: R) -> R:
    """Let clients and the nginx in front cache the response for a short while: everything
    public is the same for every caller, and a minute of staleness is acceptable."""
    patch_cache_control(response, public=True, max_age=settings.NEWS_PUBLIC_CACHE_SECONDS)
    return response
