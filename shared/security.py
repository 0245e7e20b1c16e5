"""Security plumbing both services share: the Content-Security-Policy of each surface and the
rate limit of Django admin logins.

Policies (django-csp): every response gets the project's `CONTENT_SECURITY_POLICY` (for the
APIs `default-src 'none'`: JSON never loads anything, so a response opened in a browser or
injected into a frame can do nothing); admin pages get `ADMIN_CONTENT_SECURITY_POLICY`, which
lets the admin load its own CSS, JS and images from /static/ on the same origin and nothing else.
"""

import math
from collections.abc import Callable
from functools import wraps
from typing import Any

from csp.middleware import CSPMiddleware, PolicyParts
from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.utils.translation import ngettext

from shared.env import Rate
from shared.http import client_network
from shared.ratelimit import identity_normalize, usage_count

ADMIN_PREFIX = "/admin/"


class SurfaceCSPMiddleware(CSPMiddleware):
    """django-csp, with the admin's own policy on admin paths."""

    def get_policy_parts(
        self, request: HttpRequest, response: HttpResponseBase, report_only: bool = False
    ) -> PolicyParts:
        parts = super().get_policy_parts(request, response, report_only)
        if not report_only and parts.config is None and request.path_info.startswith(ADMIN_PREFIX):
            parts.config = settings.ADMIN_CONTENT_SECURITY_POLICY["DIRECTIVES"]
        return parts


def login_attempts_limited(
    login_view: Callable[..., HttpResponseBase],
) -> Callable[..., HttpResponseBase]:
    """Wrap the admin's login view: at most ADMIN_LOGIN_RATE_LIMIT attempts (POSTs) per client
    address and username, and ADMIN_LOGIN_IP_RATE_LIMIT per client address over all usernames
    (each `calls/period`); then 429 with Retry-After. Showing the form (GET) is
    never limited. Counted on the shared cache, or in the database while it is unreachable."""

    @wraps(login_view)
    def login(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if request.method == "POST":
            retry_after = _login_retry_after(request)
            if retry_after:
                minutes = math.ceil(retry_after / 60)
                # In the admin's language (the news admin's catalogue has it in Swedish).
                text = ngettext(
                    "Too many login attempts. Try again in %(minutes)d minute.",
                    "Too many login attempts. Try again in %(minutes)d minutes.",
                    minutes,
                ) % {"minutes": minutes}
                return HttpResponse(
                    text + "\n",
                    status=429,
                    content_type="text/plain; charset=utf-8",
                    headers={"Retry-After": str(retry_after)},
                )
        return login_view(request, *args, **kwargs)

    return login


def _login_retry_after(request: HttpRequest) -> int:
    """Count this attempt in its buckets; the seconds until the later one resets when either
    is over its limit, else 0.

    No bucket is per username alone: anyone could then lock an editor out by guessing from
    elsewhere. Guessing one password from many addresses is bounded by the addresses an
    attacker has times the per-pair limit; the password validators are the defence there."""
    address = client_network(request)
    # The username as Django's login form reads it (NFKC), and case-folded, so that no spelling
    # of one username gets a counter of its own.
    username = identity_normalize(request.POST.get("username", ""))
    buckets = [
        ("admin-login-ip", address, settings.ADMIN_LOGIN_IP_RATE_LIMIT),
        ("admin-login-user", f"{address}\n{username}", settings.ADMIN_LOGIN_RATE_LIMIT),
    ]
    retry_after = 0
    for group, bucket, rate in buckets:
        usage = usage_count(
            request,
            group=group,
            bucket=bucket,
            rate=Rate.parse(rate),
            policy="admin-login",
            fail_closed=True,
        )
        if usage is not None and usage.exceeded:
            retry_after = max(retry_after, usage.reset_in)
    return retry_after
