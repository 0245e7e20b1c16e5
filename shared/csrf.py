"""The page a refused form gets (CSRF_FAILURE_VIEW), in the admin's own look.

A CSRF failure in the admin almost always means the form's token is stale: the editor logged in
or out in another tab, or the session ended. Django's default page is unstyled, in English
internals, and leaves the editor no way back; this one says what happened, keeps nothing secret
(the reason is logged, not shown) and links back to the form, whose input the browser's back
button still holds. Each service supplies its own `csrf_failure.html` in its own language.
"""

import logging
from urllib.parse import urlsplit

from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.http import url_has_allowed_host_and_scheme

logger = logging.getLogger(__name__)


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    logger.warning("CSRF check failed for %s %s: %s", request.method, request.path, reason)
    back = request.path
    if not url_has_allowed_host_and_scheme(back, allowed_hosts=None):
        back = "/admin/"
    context = {
        **admin.site.each_context(request),
        "title": "",
        "back": urlsplit(back).path,
    }
    return render(request, "csrf_failure.html", context, status=403)
