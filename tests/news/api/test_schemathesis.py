"""schemathesis over the whole OpenAPI schema of the news service (/api/v1 and the legacy JSON),
as a signed-in app, against the service as deployed: gunicorn with uvicorn workers and the
per-process response cache in front of Django.

Every generated request carries a fresh Bearer token (logout and account deletion end the one
they were sent with), and the rate limits are lifted so that a 429 cannot hide an answer that
breaks the schema (the limits themselves are tested elsewhere). Checks: schemathesis' defaults,
among them no 5xx, status codes, content types, headers and bodies as documented, and every
answer validated strictly by openapi-core (tests/support/openapi_strict.py).
"""

from collections.abc import Iterator

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings

from news_site.accounts.models import Provider
from news_site.accounts.services import account_for_identity, token_issue
from tests.conftest import Gunicorn, news_served
from tests.support.news_factories import EpisodeFactory, StoryFactory
from tests.support.openapi_strict import openapi_core_strict

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.every_backend]

UNLIMITED = "1000000/m"


@pytest.fixture
def server(make_feed, make_entry, make_tag) -> Iterator[Gunicorn]:
    feed = make_feed()
    story = StoryFactory(title="Ny iPhone", slug="ny-iphone", entries_count=1)
    make_entry(feed, tags=[make_tag("iPhone")], story=story)
    EpisodeFactory(guid="ep-1", title="Avsnitt 1")
    with news_served(
        {
            "NEWS_EMBEDDING_MODEL": "off",
            "LOG_LEVEL": "ERROR",
            # Login codes go nowhere.
            "EMAIL_BACKEND": "django.core.mail.backends.dummy.EmailBackend",
            "NEWS_SEARCH_RATE_LIMIT": UNLIMITED,
            "NEWS_LOGIN_RATE_LIMIT": UNLIMITED,
            "NEWS_LOGIN_CODE_RATE_LIMIT": UNLIMITED,
            # Both providers configured as in production (their keys are out of reach: a token
            # that gets as far as the key check is answered 503, which the schema documents).
            "NEWS_APPLE_AUDIENCE": "se.example.news",
            "NEWS_GOOGLE_AUDIENCE": "news.apps.example",
            "NEWS_APPLE_JWKS_URL": "http://127.0.0.1:9/keys",
            "NEWS_GOOGLE_JWKS_URL": "http://127.0.0.1:9/keys",
        }
    ) as server:
        yield server


def fresh_token() -> str:
    # The account comes back if a generated DELETE /auth/account removed it.
    account = account_for_identity(
        provider=Provider.EMAIL, subject="fuzz@example.se", email="fuzz@example.se"
    )
    raw, _token = token_issue(account=account)
    return raw


def test_every_operation_answers_a_signed_in_app_as_documented(server):
    schema = schemathesis.openapi.from_url(f"{server.url}/api/v1/schema?format=json")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 25
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(
            max_examples=12,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        def answers_as_documented(case):
            # A cursor is opaque, signed by the service: no schema can say which strings it
            # signed, so a generated one is a 400 (tests/news/api/test_cursors.py).
            if case.query:
                case.query.pop("cursor", None)
            case.call_and_validate(
                headers={"Authorization": f"Bearer {fresh_token()}"},
                additional_checks=[openapi_core_strict],
            )

        answers_as_documented()
