"""Factories for the compliance service's models: API keys issued as the access service issues
them, published versions as reindex writes them, and the monitor's snapshots and flags.

Rows made here skip the services' side effects on purpose where a test needs that (a
`ReviewFlagFactory` row does not drop the cached review report, as `flag_raise` does)."""

import hashlib
from datetime import UTC, timedelta
from typing import Any

import factory
from django.utils import timezone
from factory.django import DjangoModelFactory

from compliance_site.access.keys import api_key_create
from compliance_site.access.models import ApiKey
from compliance_site.monitoring.models import (
    FlagOrigin,
    MonitoredSource,
    ReviewFlag,
    SourceSnapshot,
)
from compliance_site.records.documents import (
    FIRST_SCHEMA_VERSION,
    JURISDICTIONS,
    key_diff,
    payload_hash,
)
from compliance_site.records.models import (
    ChangeSource,
    IndexCursor,
    ReindexOutcome,
    ReindexProblem,
    ReindexRun,
    Resource,
    ResourceType,
    ResourceVersion,
    TrackedFile,
)


class ApiKeyFactory(DjangoModelFactory):
    """A key issued by `api_key_create`, which stores only its hash; the raw key is on the
    made row as `raw_key`."""

    class Meta:
        model = ApiKey

    name = factory.Sequence(lambda n: f"integration {n}")
    rate_limit_per_minute = None

    @classmethod
    def _create(cls, model_class: type[ApiKey], *args: Any, **kwargs: Any) -> ApiKey:
        key, raw_key = api_key_create(
            name=kwargs["name"], rate_limit_per_minute=kwargs["rate_limit_per_minute"]
        )
        key.raw_key = raw_key
        return key


class SourceSnapshotFactory(DjangoModelFactory):
    """One successful fetch of a state's statute page."""

    class Meta:
        model = SourceSnapshot

    state_abbreviation = "TX"
    url = factory.LazyAttribute(lambda s: f"https://law.example/{s.state_abbreviation.lower()}")
    fetched_at = factory.LazyFunction(timezone.now)
    content_hash = factory.Sequence(lambda n: f"sha256:{n}")
    successful = True


class ReviewFlagFactory(DjangoModelFactory):
    """An open flag stored directly, without the cache drop `flag_raise` does."""

    class Meta:
        model = ReviewFlag

    state_abbreviation = "TX"
    reason = "Editor asked for a check."
    origin = FlagOrigin.EDITOR
    created_at = factory.LazyFunction(timezone.now)


class MonitoredSourceFactory(DjangoModelFactory):
    class Meta:
        model = MonitoredSource

    state_abbreviation = "TX"
    url = factory.Sequence(lambda n: f"https://law.example/statutes/{n}")
    # As the monitor keys a source (monitoring/services.py).
    url_hash = factory.LazyAttribute(lambda s: hashlib.sha256(s.url.encode()).hexdigest())


class ResourceVersionFactory(DjangoModelFactory):
    """A version of a state's record, as reindex publishes it from one commit (each made one
    has a version number of its own)."""

    class Meta:
        model = ResourceVersion

    resource_type = ResourceType.STATE
    resource_key = "TX"
    version = factory.Sequence(lambda n: n + 1)
    sequence = factory.Sequence(lambda n: n + 1)
    payload = factory.LazyAttribute(lambda v: {"state_abbreviation": v.resource_key})
    payload_hash = factory.LazyAttribute(lambda v: payload_hash(v.payload))
    payload_schema_version = FIRST_SCHEMA_VERSION
    yaml_path = factory.LazyAttribute(lambda v: f"states/{v.resource_key}.yaml")
    commit_sha = factory.Sequence(lambda n: hashlib.sha1(str(n).encode()).hexdigest())  # noqa: S324
    git_sha = factory.LazyAttribute(lambda v: v.commit_sha[:12])
    committed_at = factory.LazyFunction(lambda: timezone.now().astimezone(UTC))
    git_committed_at = factory.SelfAttribute("committed_at")
    released_at = factory.LazyAttribute(lambda v: v.committed_at.date())
    committed_by = "Editor <editor@example.org>"
    change_summary = "Update the record."
    source = ChangeSource.HUMAN
    diff = factory.LazyAttribute(lambda v: key_diff(None, v.payload))


class ResourceFactory(DjangoModelFactory):
    """A jurisdiction's resource whose current version is `current` (a new one unless given)."""

    class Meta:
        model = Resource

    resource_type = ResourceType.STATE
    resource_key = factory.Iterator(sorted(JURISDICTIONS))
    current = factory.SubFactory(
        ResourceVersionFactory,
        resource_type=factory.SelfAttribute("..resource_type"),
        resource_key=factory.SelfAttribute("..resource_key"),
    )


class IndexCursorFactory(DjangoModelFactory):
    class Meta:
        model = IndexCursor
        django_get_or_create = ("name",)

    name = "default"
    last_commit_sha = factory.Sequence(lambda n: hashlib.sha1(str(n).encode()).hexdigest())  # noqa: S324


class TrackedFileFactory(DjangoModelFactory):
    class Meta:
        model = TrackedFile

    path = factory.Sequence(lambda n: f"states/S{n}.yaml")
    blob_sha = factory.Sequence(lambda n: hashlib.sha1(f"blob {n}".encode()).hexdigest())  # noqa: S324
    valid = True


class ReindexProblemFactory(DjangoModelFactory):
    class Meta:
        model = ReindexProblem

    path = factory.Sequence(lambda n: f"states/S{n}.yaml")
    commit_sha = factory.Sequence(lambda n: hashlib.sha1(str(n).encode()).hexdigest())  # noqa: S324
    message = "not valid YAML"


class ReindexRunFactory(DjangoModelFactory):
    """A run of reindex that published everything that finished a minute after it started."""

    class Meta:
        model = ReindexRun

    started_at = factory.LazyFunction(lambda: timezone.now() - timedelta(minutes=1))
    finished_at = factory.LazyFunction(timezone.now)
    outcome = ReindexOutcome.OK
