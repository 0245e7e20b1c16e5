"""Factories for the models both services have: Django's staff users and the database copy of
the rate-limit counters (shared/limits)."""

from datetime import timedelta

import factory
from django.contrib.auth import get_user_model
from django.utils import timezone
from factory.django import DjangoModelFactory

from shared.limits.models import Counter

# The password every factory-made user has unless a test gives its own.
USER_PASSWORD = "x-long-password"


class UserFactory(DjangoModelFactory):
    """A staff user of the admin; `UserFactory(superuser=True)` has every permission. The
    password is hashed as Django hashes it on `create_user`."""

    class Meta:
        model = get_user_model()
        skip_postgeneration_save = True

    class Params:
        superuser = factory.Trait(is_staff=True, is_superuser=True)

    username = factory.Sequence(lambda n: f"redaktor{n}")
    email = factory.LazyAttribute(lambda user: f"{user.username}@example.org")
    password = factory.django.Password(USER_PASSWORD)
    is_staff = True


class CounterFactory(DjangoModelFactory):
    class Meta:
        model = Counter

    key = factory.Sequence(lambda n: f"{n:064x}")
    hits = 1
    expires_at = factory.LazyFunction(lambda: timezone.now() + timedelta(minutes=1))
