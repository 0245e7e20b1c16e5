"""Errors the accounts app raises while authenticating a request. They are DRF exceptions with
a machine-readable `type`, so the api's one handler renders them in its envelope; the api
builds on this app, never the other way round."""

from rest_framework import exceptions

BEARER_CHALLENGE = 'Bearer realm="api"'


class InvalidToken(exceptions.AuthenticationFailed):
    """A presented Bearer token that is malformed, unknown, expired or revoked."""

    type = "invalid_token"


class TokenInQuery(exceptions.APIException):
    """A token sent in the query string, where it would leak into logs and Referer headers."""

    status_code = 400
    type = "token_in_query"
