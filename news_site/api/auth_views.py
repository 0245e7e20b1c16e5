"""The /api/v1 login, logout and account operations; the identity policy behind them is
news_site.accounts.services."""

from typing import TypedDict, cast

from django.conf import settings
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from news_site.accounts import services as accounts
from news_site.accounts.models import Account
from news_site.accounts.oidc import id_token_verify
from news_site.accounts.tokens import Caller
from news_site.api import openapi
from news_site.api import serializers as shapes
from news_site.api.base import AccountView, ApiView
from news_site.api.envelopes import item_response
from news_site.api.errors import ApiError, InvalidParameter, first_error, known_type
from shared.env import Rate
from shared.http import client_network
from shared.ratelimit import usage_count

# A mail relay that refused a code is usually back within the minute.
MAIL_RETRY_AFTER_SECONDS = 30


class _Budget(TypedDict):
    """The rate-limit bucket of `ApiView.limit` and `usage_count`."""

    group: str
    bucket: str
    rate: Rate
    policy: str
    fail_closed: bool


class LoginView(ApiView):
    @openapi.LOGIN_POST
    def post(self, request: Request) -> Response:
        # Per client IP first, so one address cannot spray codes or guesses over many emails.
        self.limit(
            request,
            group="news-login",
            bucket=client_network(request),
            rate=Rate.parse(settings.NEWS_LOGIN_RATE_LIMIT),
            policy="login",
            refusal="too many logins from this address: try again later",
            fail_closed=True,
        )
        body = shapes.LoginRequest(data=request.data)
        if not body.is_valid():
            raise InvalidParameter(first_error(body.errors))
        login = body.validated_data
        try:
            if login["provider"] == "email" and "code" not in login:
                return self._send_code(request, login["email"])
            if login["provider"] == "email":
                account = accounts.login_code_verify(email=login["email"], code=login["code"])
            else:
                claims = id_token_verify(
                    provider_name=login["provider"], id_token=login["id_token"]
                )
                account = accounts.account_for_id_token_claims(
                    provider=login["provider"], claims=claims
                )
        except accounts.LoginFailed as exc:
            status = 503 if exc.code == "provider_unavailable" else 401
            if exc.code == "provider_not_configured":
                status = 400
            raise ApiError(exc.message, type=known_type(exc.code), status=status) from exc
        raw, token = accounts.token_issue(account=account)
        data = {
            "token": raw,
            "token_type": "Bearer",
            "expires_at": serializers.DateTimeField().to_representation(token.expires_at),
            "account_id": account.pk,
        }
        return item_response(data)

    def _send_code(self, request: Request, email: str) -> Response:
        budget: _Budget = {
            "group": "news-login-code",
            "bucket": accounts.email_normalize(email),
            "rate": Rate.parse(settings.NEWS_LOGIN_CODE_RATE_LIMIT),
            "policy": "login-code",
            "fail_closed": True,
        }
        # Checked now and counted once the code is mailed: a code the relay refused does not
        # count against the address's codes (shared/ratelimit.py, usage_check).
        self.limit(
            request,
            refusal="too many codes for this address: try again later",
            count=False,
            **budget,
        )
        try:
            accounts.login_code_send(email=email)
        except accounts.MailUnavailable as exc:
            raise ApiError(
                "the login code could not be sent: try again shortly",
                type="service_unavailable",
                status=503,
                headers={"Retry-After": str(MAIL_RETRY_AFTER_SECONDS)},
            ) from exc
        self.usage = usage_count(request, **budget)
        data = {"status": "code_sent", "expires_in": settings.NEWS_LOGIN_CODE_SECONDS}
        return item_response(data, status=202)


class LogoutView(AccountView):
    @openapi.LOGOUT_POST
    def post(self, request: Request) -> Response:
        accounts.token_revoke(token=cast(Caller, request.auth).token)
        return Response(status=204)


class AccountDeleteView(AccountView):
    @openapi.ACCOUNT_DELETE
    def delete(self, request: Request) -> Response:
        accounts.account_delete(account=cast(Account, request.user))
        return Response(status=204)
