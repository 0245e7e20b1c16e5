"""Every news factory makes rows the models accept, two in a row (unique fields stay unique),
and the Bearer token a factory issues is one the API takes."""

import factory
import pytest

from tests.support import news_factories, shared_factories

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]

FACTORIES = [
    value
    for module in (news_factories, shared_factories)
    for value in vars(module).values()
    if isinstance(value, type)
    and issubclass(value, factory.django.DjangoModelFactory)
    and value is not factory.django.DjangoModelFactory
]
OURS = ("news", "accounts", "search", "podcasts", "auth", "limits")


@pytest.mark.parametrize("made_by", FACTORIES, ids=lambda f: f.__name__)
def test_a_factory_makes_valid_rows(made_by):
    first, second = made_by(), made_by()

    assert first.pk != second.pk
    if first._meta.app_label in OURS:
        first.full_clean()
        second.full_clean()


def test_a_factory_token_signs_in(http):
    token = news_factories.ApiTokenFactory()

    assert http.get("/api/v1/entries/follows").status_code == 401
    assert http.get("/api/v1/entries/follows", headers=token.header).status_code == 200
    assert token.raw not in {token.token_hash, ""}


def test_a_factory_user_logs_in_with_its_password(client):
    user = shared_factories.UserFactory()

    assert client.login(username=user.username, password=shared_factories.USER_PASSWORD)
