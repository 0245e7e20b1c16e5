"""What every /api/v1 view shares: its permission, rate limits, cache headers, and lists
answered from the pages kept in the process (news_site.api.pages)."""

from typing import Any

from django.http import HttpResponse
from django.utils.cache import patch_cache_control, patch_vary_headers
from django.utils.http import http_date
from rest_framework import serializers
from rest_framework.permissions import AllowAny, BasePermission
from rest_framework.request import Request
from rest_framework.views import APIView

from news_site.api.errors import ApiError
from news_site.api.pages import ItemsQuery, page_bytes
from news_site.news.http import public
from shared.env import Rate
from shared.ratelimit import Usage, apply_headers, usage_check, usage_count


class HasAccount(BasePermission):
    message = "this endpoint needs 'Authorization: Bearer <token>'"

    def has_permission(self, request: Request, view: APIView) -> bool:
        return request.user is not None


class ApiView(APIView):
    # Same as no permission at run time; it tells the schema that the token is optional here.
    permission_classes = [AllowAny]
    usage: Usage | None = None

    def get_authenticate_header(self, request: Request) -> str:
        # Always answer 401 (never 403) with a challenge when credentials are missing or bad.
        return 'Bearer realm="api"'

    def limit(
        self,
        request: Request,
        *,
        group: str,
        bucket: str,
        rate: Rate,
        policy: str,
        refusal: str,
        fail_closed: bool = False,
        count: bool = True,
    ) -> None:
        """Count this call in `bucket`; over the limit, a 429 `rate_limited` saying `refusal`.
        The count goes out in the rate-limit headers of whatever the view answers.
        `fail_closed`: counted in the database while Redis is down (shared/ratelimit.py).
        `count=False` only checks: the view counts with `usage_count` once the work is done."""
        self.usage = (usage_count if count else usage_check)(
            request,
            group=group,
            bucket=bucket,
            rate=rate,
            policy=policy,
            fail_closed=fail_closed,
        )
        if self.usage is not None and self.usage.exceeded:
            raise ApiError(refusal, type="rate_limited", status=429)

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        patch_vary_headers(response, ["Authorization"])
        if self.usage is not None:
            apply_headers(response, self.usage)
        if "Cache-Control" not in response:
            personal = "HTTP_AUTHORIZATION" in request.META
            if request.method == "GET" and response.status_code == 200 and not personal:
                public(response)
            elif request.method == "GET" and response.status_code == 200:
                patch_cache_control(response, private=True, no_cache=True)
            else:
                patch_cache_control(response, no_store=True)
        return response

    def page(
        self,
        request: Request,
        items: ItemsQuery,
        serializer: type[serializers.Serializer],
        params: dict[str, Any],
        *,
        shared_as: str | None = None,
        **context: Any,
    ) -> HttpResponse:
        """One page of `items()`, the same for every caller: kept and served to every caller
        asking for it when named by `shared_as` (news_site.api.pages.page_bytes)."""
        rendered = page_bytes(
            view=self,
            request=request,
            items=items,
            serializer=serializer,
            params=params,
            shared_as=shared_as,
            context=context,
        )
        response = HttpResponse(rendered.body, content_type=request.accepted_renderer.media_type)
        # shared.conditional answers 304s with these, and makes them only for a page without.
        if rendered.etag is not None:
            response["ETag"] = rendered.etag
        if rendered.first_answered is not None:
            response["Last-Modified"] = http_date(rendered.first_answered)
        return response


class AccountView(ApiView):
    permission_classes = [HasAccount]
