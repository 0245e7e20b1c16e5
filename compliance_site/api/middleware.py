"""Authentication and rate limiting of every request to the compliance API.

Runs before the views so that every response (200, 304, 401, 404, 429) counts and carries the
rate-limit headers. A valid key is counted against its own `rate_limit_per_minute`; anything
else (no key, a wrong key, a garbled header) is counted against the client's IP address.
"""

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from compliance_site.access.keys import api_key_authenticate
from compliance_site.access.models import ApiKey
from compliance_site.api.errors import error_response
from shared.env import Rate
from shared.http import MalformedAuthorization, bearer_token, client_network
from shared.ratelimit import apply_headers, usage_count

API_PREFIX = "/api/v1/compliance/"


class ApiAccessMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not request.path.startswith(API_PREFIX):
            return self.get_response(request)
        key, credential_error = _resolve_key(request)
        request.api_key = key  # type: ignore[attr-defined]
        if key is not None:
            bucket, rate, policy = f"key:{key.pk}", Rate(key.rate_limit_per_minute, 60), "per-key"
        else:
            bucket = f"ip:{client_network(request)}"
            rate, policy = Rate.parse(settings.COMPLIANCE_ANONYMOUS_RATE_LIMIT), "per-ip"
        usage = usage_count(
            request,
            group="compliance",
            bucket=bucket,
            rate=rate,
            policy=policy,
        )
        response: HttpResponse
        if usage is not None and usage.exceeded:
            response = error_response(
                429,
                "rate_limit_exceeded",
                f"Rate limit of {usage.limit} requests per {usage.window_seconds} seconds "
                f"exceeded; retry in {usage.reset_in} seconds.",
                retry_after=usage.reset_in,
            )
        elif credential_error:
            response = error_response(401, "invalid_api_key", credential_error)
            response["WWW-Authenticate"] = 'Bearer realm="compliance", error="invalid_token"'
        else:
            response = self.get_response(request)
        if usage is not None:
            apply_headers(response, usage)
        return response


def _resolve_key(request: HttpRequest) -> tuple[ApiKey | None, str]:
    try:
        token = bearer_token(request)
    except MalformedAuthorization as exc:
        return None, str(exc)
    if token is None:
        return None, ""
    key = api_key_authenticate(token)
    if key is None:
        return None, "the API key is not valid"
    return key, ""
