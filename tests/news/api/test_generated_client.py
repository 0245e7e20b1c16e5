"""The news client an app developer generates with `openapi-python-client` from the served
schema, against the service as deployed (gunicorn, uvicorn worker, the response cache): it pages
through every entry by `next_cursor` while new entries are stored between pages, and sees each
entry that was there when it began exactly once, and no entry twice; and it reads an episode
whose feed GUID no path could hold by its `episode_id`."""

import functools
import importlib
from pathlib import Path

import pytest

from news_site.news.generation import content_changed
from tests.conftest import news_served
from tests.support.generated_clients import generated_client
from tests.support.news_factories import EntryFactory, EpisodeFactory, FeedFactory

# The live server reads what the test commits; the keyset runs on both databases.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.every_backend]


def _ingested(feed) -> None:
    """New entries stored as ingest stores them: at the top of the list, the lists' content
    generation moved (news_site.news.generation)."""
    EntryFactory.create_batch(2, feed=feed, published_at=None)
    content_changed()


def test_the_generated_client_pages_by_cursor_while_entries_arrive(tmp_path: Path):
    feed = FeedFactory()
    before = {entry.pk for entry in EntryFactory.create_batch(23, feed=feed)}
    episode = EpisodeFactory(guid="https://podd.example/?p=12#t=0 /ep", title="Avsnitt 12")

    with (
        news_served({"NEWS_EMBEDDING_MODEL": "off", "LOG_LEVEL": "ERROR"}) as server,
        generated_client(f"{server.url}/api/v1/schema", "news_client", tmp_path) as package,
    ):
        entries_list = importlib.import_module("news_client.api.entries.entries_list")
        client = package.Client(base_url=server.url, raise_on_unexpected_status=True)
        read = functools.partial(entries_list.sync, client=client, per_page=5)
        seen: list[int] = []
        pages = 0
        page = read()
        while True:
            assert isinstance(page, package.models.EntryList), page
            seen += [entry.id for entry in page.data]
            pages += 1
            if page.pagination.next_cursor is None:
                assert page.pagination.has_more is False
                break
            _ingested(feed)
            page = read(cursor=page.pagination.next_cursor)

        episode_get = importlib.import_module("news_client.api.podd_episodes.podd_episode_get")
        read_episode = episode_get.sync(episode.episode_id, client=client)
        assert isinstance(read_episode, package.models.EpisodeDetailEnvelope), read_episode
        assert read_episode.data.guid == episode.guid

    assert pages >= 5
    assert len(seen) == len(set(seen)), "an entry was shown twice"
    assert before <= set(seen), "an entry was skipped"
