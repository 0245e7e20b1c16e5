"""The OpenAPI schema at /api/v1/schema, and schemathesis over every operation of it against
the application in-process (tests/support/inprocess.py): no 500, and every response matches the
schema. test_schemathesis.py runs it again against the deployed stack."""

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings

from tests.support.inprocess import wsgi_application
from tests.support.news_factories import EpisodeFactory, StoryFactory

pytestmark = pytest.mark.every_backend


@pytest.fixture
def api_schema(db, make_feed, make_entry, make_tag, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    settings.NEWS_EMBEDDING_MODEL = "off"
    # Both login providers configured as in production (their keys are out of reach), and the
    # login limit lifted: neither a 400 for an unconfigured provider nor a 429 hides anything.
    settings.NEWS_APPLE_AUDIENCE = ["se.example.news"]
    settings.NEWS_GOOGLE_AUDIENCE = ["news.apps.example"]
    settings.NEWS_APPLE_JWKS_URL = settings.NEWS_GOOGLE_JWKS_URL = "http://127.0.0.1:9/keys"
    settings.NEWS_LOGIN_RATE_LIMIT = "1000000/10m"
    feed = make_feed()
    story = StoryFactory(title="Ny iPhone", slug="ny-iphone", entries_count=1)
    make_entry(feed, tags=[make_tag("iPhone")], story=story)
    EpisodeFactory(guid="ep-1", title="Avsnitt 1")
    return schemathesis.openapi.from_wsgi("/api/v1/schema?format=json", wsgi_application)


def test_the_schema_documents_every_endpoint_and_the_envelopes(http):
    schema = http.get("/api/v1/schema", params={"format": "json"}).json()

    paths = set(schema["paths"])
    assert {
        "/api/v1/auth/login",
        "/api/v1/auth/logout",
        "/api/v1/auth/account",
        "/api/v1/entries",
        "/api/v1/entries/popular",
        "/api/v1/entries/follows",
        "/api/v1/entries/search",
        "/api/v1/feeds",
        "/api/v1/feeds/{feed_id}",
        "/api/v1/feeds/{feed_id}/entries",
        "/api/v1/feeds/{feed_id}/follow",
        "/api/v1/tags",
        "/api/v1/tags/{slug}",
        "/api/v1/tags/{slug}/entries",
        "/api/v1/stories",
        "/api/v1/stories/{story_id}",
        "/api/v1/podd_episodes",
        "/api/v1/podd_episodes/{episode_id}",
        "/entries.json",
        "/feeds.json",
        "/tags.json",
    } <= paths
    components = schema["components"]["schemas"]
    assert set(components["EntryList"]["properties"]) == {"data", "pagination", "meta"}
    assert set(components["ErrorEnvelope"]["properties"]) == {"error", "meta"}
    assert "bearerAuth" in schema["components"]["securitySchemes"]


def test_every_operation_answers_as_documented(api_schema):
    # Hypothesis drives each operation itself: schemathesis' pytest plugin does not run on the
    # pytest this project uses.
    operations = [result.ok() for result in api_schema.get_all_operations()]
    assert len(operations) >= 25
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(
            max_examples=15,
            deadline=None,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        def answers_as_documented(case):
            # A cursor is opaque, signed by the service: no schema can say which strings it
            # signed, so a generated one is a 400 (tests/news/api/test_cursors.py).
            if case.query:
                case.query.pop("cursor", None)
            case.call_and_validate()

        answers_as_documented()
