"""Factories for the news service's models: rows as ingest, clustering and the accounts service
leave them (GUID and address hashes as the feeds step computes them, hashed Bearer tokens)."""

from datetime import datetime, timedelta

import factory
import numpy as np
from django.utils import timezone
from django.utils.text import slugify
from django_tasks_db.models import DBTaskResult
from factory.django import DjangoModelFactory

from news_site.accounts.models import Account, ApiToken, Follow, Identity, LoginCode, Provider
from news_site.accounts.services import account_for_identity, token_issue
from news_site.news.models import (
    Entry,
    EntryView,
    Feed,
    GuidePageType,
    ProductGuide,
    Story,
    SummaryState,
    Tag,
)
from news_site.news.text import canonical_url, sha256
from news_site.podcasts.identifiers import episode_id_for
from news_site.podcasts.models import EpisodeTranscript, PodcastEpisode
from news_site.search.models import EntryEmbedding


class FeedFactory(DjangoModelFactory):
    class Meta:
        model = Feed

    title = factory.Sequence(lambda n: f"Källa {n}")
    url = factory.Sequence(lambda n: f"https://source{n}.example/feed.xml")


class TagFactory(DjangoModelFactory):
    class Meta:
        model = Tag

    name = factory.Sequence(lambda n: f"Tagg {n}")
    slug = factory.LazyAttribute(lambda tag: slugify(tag.name))


class StoryFactory(DjangoModelFactory):
    class Meta:
        model = Story

    title = factory.Sequence(lambda n: f"Händelse {n}")


def _hours_ago(hours: int) -> datetime:
    return timezone.now() - timedelta(hours=hours)


class EntryFactory(DjangoModelFactory):
    """A summarised, translated and relevant entry, listed when it was published (one of the
    last two days); `tags=[...]` tags it."""

    class Meta:
        model = Entry
        skip_postgeneration_save = True

    feed = factory.SubFactory(FeedFactory)
    url = factory.LazyAttributeSequence(lambda e, n: f"https://{e.feed.pk}.example/articles/{n}")
    guid = factory.LazyAttribute(lambda e: e.url)
    # As the feeds step keys an item: GUIDs are unique within one feed only.
    guid_hash = factory.LazyAttribute(lambda e: sha256(f"{e.feed.pk}\n{e.guid}"))
    canonical_url = factory.LazyAttribute(lambda e: canonical_url(e.url))
    canonical_url_hash = factory.LazyAttribute(lambda e: sha256(e.canonical_url))
    title = factory.Sequence(lambda n: f"Apple släpper nyhet {n}")
    language = "sv"
    published_at = factory.Sequence(lambda n: _hours_ago(n % 48))
    listed_at = factory.LazyAttribute(lambda e: e.published_at or timezone.now())
    content_fingerprint = factory.LazyAttribute(lambda e: sha256(e.url))
    summary_original = factory.Sequence(lambda n: f"Sammanfattning {n}.")
    summary_translated = factory.LazyAttribute(lambda e: e.summary_original)
    summary_state = SummaryState.TRANSLATED
    platform_relevant = True

    @factory.post_generation
    def tags(self, create: bool, extracted: list[Tag] | None, **kwargs: object) -> None:
        if create and extracted:
            self.tags.set(extracted)


class EntryViewFactory(DjangoModelFactory):
    class Meta:
        model = EntryView

    entry = factory.SubFactory(EntryFactory)
    day = factory.LazyFunction(lambda: timezone.localdate())
    count = 1


class GuideFactory(DjangoModelFactory):
    class Meta:
        model = ProductGuide

    slug = factory.Sequence(lambda n: f"guide-{n}")
    title = factory.Sequence(lambda n: f"Guide {n}")
    page_type = GuidePageType.PRODUCT_HUB
    body = factory.LazyAttribute(lambda guide: f"Om {guide.title}.")


class EpisodeFactory(DjangoModelFactory):
    class Meta:
        model = PodcastEpisode

    guid = factory.Sequence(lambda n: f"ep-{n}")
    title = factory.LazyAttribute(lambda episode: f"Avsnitt {episode.guid}")
    # As the ingest assigns it (podcasts/services.py).
    episode_id = factory.LazyAttribute(
        lambda episode: episode_id_for(guid=episode.guid, title=episode.title)
    )
    published_on = None


class EpisodeTranscriptFactory(DjangoModelFactory):
    class Meta:
        model = EpisodeTranscript

    episode = factory.SubFactory(EpisodeFactory)
    text = "WEBVTT\n\nHej!"
    content_type = "text/vtt"


class EntryEmbeddingFactory(DjangoModelFactory):
    """A stored vector as search writes it: float32, L2-normalised (`dimensions` long)."""

    class Meta:
        model = EntryEmbedding

    class Params:
        dimensions = 384

    entry = factory.SubFactory(EntryFactory)
    model_name = "sentence-transformers/all-MiniLM-L6-v2"
    vector = factory.LazyAttribute(
        lambda e: (np.ones(e.dimensions, dtype=np.float32) / np.sqrt(e.dimensions)).tobytes()
    )


class AccountFactory(DjangoModelFactory):
    class Meta:
        model = Account

    email = factory.Sequence(lambda n: f"konto{n}@example.se")


class IdentityFactory(DjangoModelFactory):
    class Meta:
        model = Identity

    account = factory.SubFactory(AccountFactory)
    provider = Provider.EMAIL
    subject = factory.LazyAttribute(lambda identity: identity.account.email)


class ApiTokenFactory(DjangoModelFactory):
    """A Bearer token issued by the accounts service, which stores only its hash; the raw value
    is on the made token as `raw`, and `header` is the Authorization header that sends it."""

    class Meta:
        model = ApiToken

    account = factory.SubFactory(AccountFactory)

    @classmethod
    def _create(cls, model_class: type[ApiToken], *args: object, account: Account) -> ApiToken:
        raw, token = token_issue(account=account)
        token.raw = raw
        token.header = {"Authorization": f"Bearer {raw}"}
        return token


class LoginCodeFactory(DjangoModelFactory):
    """A pending one-time code. Its hash is keyed by the secret key as the service keys it, so
    only codes the service mailed can be verified; tests of a wrong code need no raw value."""

    class Meta:
        model = LoginCode

    email = factory.Sequence(lambda n: f"kod{n}@example.se")
    code_hash = factory.Sequence(lambda n: sha256(f"code {n}"))
    expires_at = factory.LazyFunction(lambda: timezone.now() + timedelta(minutes=10))


class FollowFactory(DjangoModelFactory):
    class Meta:
        model = Follow

    account = factory.SubFactory(AccountFactory)
    feed = factory.SubFactory(FeedFactory)


class IngestRunFactory(DjangoModelFactory):
    """A finished run of the scheduled ingest task, as the task worker records it."""

    class Meta:
        model = DBTaskResult

    class Params:
        finished = factory.LazyFunction(timezone.now)

    task_path = "news_site.ingest.tasks.ingest_task"
    status = "SUCCESSFUL"
    started_at = factory.LazyAttribute(lambda run: run.finished)
    finished_at = factory.LazyAttribute(lambda run: run.finished)
    args_kwargs = factory.LazyFunction(lambda: {"args": [], "kwargs": {}})
    queue_name = "default"
    backend_name = "default"


def account_with_token(email: str = "anna@example.se") -> tuple[Account, dict[str, str]]:
    """An email account as the login makes it, and the Authorization header of a fresh token."""
    account = account_for_identity(provider=Provider.EMAIL, subject=email, email=email)
    return account, ApiTokenFactory(account=account).header
