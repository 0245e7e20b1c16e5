"""Every compliance factory makes rows the models accept, two in a row (unique fields stay
unique), and an API key a factory issues is one the API takes."""

import factory
import pytest

from tests.support import compliance_factories, shared_factories

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]

FACTORIES = [
    value
    for module in (compliance_factories, shared_factories)
    for value in vars(module).values()
    if isinstance(value, type)
    and issubclass(value, factory.django.DjangoModelFactory)
    and value is not factory.django.DjangoModelFactory
]


@pytest.mark.parametrize("made_by", FACTORIES, ids=lambda f: f.__name__)
def test_a_factory_makes_valid_rows(made_by):
    first, second = made_by(), made_by()

    assert first.pk != second.pk or made_by is compliance_factories.IndexCursorFactory
    first.full_clean()
    second.full_clean()


def test_a_factory_key_is_accepted_and_only_its_hash_is_stored(anonymous):
    key = compliance_factories.ApiKeyFactory(rate_limit_per_minute=5)

    response = anonymous.get("/meta", headers={"Authorization": f"Bearer {key.raw_key}"})

    assert response.status_code == 200
    assert key.raw_key not in {key.key_hash, key.prefix}
    assert key.rate_limit_per_minute == 5
