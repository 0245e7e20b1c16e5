"""Bearer authentication for /api/v1: `Authorization: Bearer <token>` and nothing else."""

from rest_framework.authentication import BaseAuthentication
from rest_framework.request import Request

from news_site.accounts.errors import BEARER_CHALLENGE, InvalidToken, TokenInQuery
from news_site.accounts.models import Account
from news_site.accounts.tokens import Caller, caller_authenticate
from shared.http import MalformedAuthorization, bearer_token


class BearerAuthentication(BaseAuthentication):
    def authenticate(self, request: Request) -> tuple[Account, Caller] | None:
        # Tokens in URLs end up in proxy logs, browser history and Referer headers.
        if "token" in request.query_params:
            raise TokenInQuery(
                "tokens in the query string are not accepted: send 'Authorization: Bearer <token>'"
            )
        try:
            raw = bearer_token(request._request)
        except MalformedAuthorization as exc:
            raise InvalidToken(str(exc)) from exc
        if raw is None:
            return None
        caller = caller_authenticate(raw=raw)
        if caller is None:
            raise InvalidToken("the token is unknown, expired or revoked: log in again")
        return caller.account, caller

    def authenticate_header(self, request: Request) -> str:
        return BEARER_CHALLENGE
