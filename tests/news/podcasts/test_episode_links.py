"""Episode links that survive any GUID: whatever id a podcast feed gives an episode, the stored
episode is reachable at `/api/v1/podd_episodes/<episode_id>` and `/podd/<episode_id>`, the id
stays when the title changes, and an old link (the GUID in the path, as the pages wrote it)
answers a permanent redirect to the new path. The API's answers are validated strictly against
its OpenAPI document."""

import importlib
import re
from urllib.parse import quote
from xml.sax.saxutils import escape

import httpx
import pytest
from django.apps import apps as django_apps
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from news_site.news.fetching import http_fetch
from news_site.news.models import Feed, FeedKind
from news_site.news.parsing import parse_feed
from news_site.podcasts.identifiers import EPISODE_ID_PATTERN, episode_id_for
from news_site.podcasts.models import PodcastEpisode
from news_site.podcasts.services import episodes_store
from tests.support.news_factories import EpisodeFactory, FeedFactory
from tests.support.openapi_strict import validate

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]

DETAIL = "/api/v1/podd_episodes/{episode_id}"

# Any text, with the characters a path cannot hold plainly weighted in, and longer than the
# 200 characters the ingest keeps.
GUIDS = st.text(min_size=1, max_size=260) | st.text(
    alphabet=st.sampled_from("?#/%&;= .:\\\x01\x7f\u200bé🎧"), min_size=1, max_size=40
).map(lambda tail: f"https://podd.example/ep?id={tail}")


def _podcast(guid: str, title: str) -> bytes:
    return (
        '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>Podden</title>'
        f'<item><title>{escape(title)}</title><guid isPermaLink="false">{escape(guid)}</guid>'
        '<enclosure url="https://podd.example/1.mp3" length="1" type="audio/mpeg"/></item>'
        "</channel></rss>"
    ).encode()


def _ingested(feed: Feed, guid: str, title: str) -> PodcastEpisode | None:
    """The episode as the feeds step stores it; None when the GUID cleans to nothing (control
    characters, spaces), which names no episode."""
    parsed = parse_feed(_podcast(guid, title), base_url="https://podd.example/feed.xml")
    if not parsed.episodes:
        return None
    episodes_store(feed, parsed.episodes, fetcher=http_fetch)
    return PodcastEpisode.objects.get(guid=parsed.episodes[0].guid)


def _old_link(prefix: str, guid: str) -> str:
    # As the episode list wrote it (`urlencode:''`); "." and ".." name the parent in any client.
    assume(guid not in {".", ".."})
    return prefix + quote(guid, safe="")


def _strictly_valid(schema: dict, answer: httpx.Response) -> None:
    validate(
        schema,
        method="get",
        url=str(answer.url),
        status=answer.status_code,
        headers=answer.headers,
        body=answer.content,
        operation_path=DETAIL,
    )


@pytest.fixture
def schema(http) -> dict:
    return http.get("/api/v1/schema", params={"format": "json"}).json()


@given(guid=GUIDS, title=st.text(max_size=80))
@settings(
    max_examples=60,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_every_stored_episode_is_reachable_by_its_link_and_old_links_redirect(
    http, schema, guid, title
):
    episode = _ingested(FeedFactory(kind=FeedKind.PODCAST), guid, title)
    assume(episode is not None)
    assert episode is not None
    assert re.fullmatch(EPISODE_ID_PATTERN, episode.episode_id), episode.episode_id

    path = f"/api/v1/podd_episodes/{episode.episode_id}"
    answer = http.get(path)
    assert answer.status_code == 200, (guid, path)
    assert answer.json()["data"]["guid"] == episode.guid
    _strictly_valid(schema, answer)
    listed = http.get("/api/v1/podd_episodes", params={"per_page": 100}).json()["data"]
    assert episode.episode_id in {item["episode_id"] for item in listed}
    assert http.get(f"/podd/{episode.episode_id}").status_code == 200
    assert f'href="/podd/{episode.episode_id}"' in http.get("/podd").text

    moved = http.get(_old_link("/api/v1/podd_episodes/", episode.guid), params={"x": "1"})
    assert moved.status_code == 301, (episode.guid, moved.url)
    assert moved.headers["Location"] == f"{path}?x=1"
    _strictly_valid(schema, moved)
    page = http.get(_old_link("/podd/", episode.guid))
    assert page.status_code == 301
    assert page.headers["Location"] == f"/podd/{episode.episode_id}"


def test_the_id_stays_when_the_title_changes(http):
    feed = FeedFactory(kind=FeedKind.PODCAST)
    first = _ingested(feed, "https://podd.example/?p=12#x", "Avsnitt 12: iPhone")
    again = _ingested(feed, "https://podd.example/?p=12#x", "Avsnitt 12: iPhone 17 (rättad)")
    assert first is not None and again is not None

    assert again.pk == first.pk
    assert again.title == "Avsnitt 12: iPhone 17 (rättad)"
    assert again.episode_id == first.episode_id
    assert first.episode_id.startswith("avsnitt-12-iphone-")


def test_the_same_title_under_two_guids_gives_two_ids():
    one = EpisodeFactory(guid="a", title="Veckans nyheter")
    two = EpisodeFactory(guid="b", title="Veckans nyheter")

    assert one.episode_id != two.episode_id


def test_a_path_that_names_nothing_is_still_a_404(http):
    EpisodeFactory(guid="https://podd.example/?p=1")

    answer = http.get("/api/v1/podd_episodes/" + quote("https://podd.example/?p=2", safe=""))
    assert answer.status_code == 404
    assert answer.json()["error"]["type"] == "not_found"
    assert http.get("/podd/finns-inte").status_code == 404


def test_an_editor_cannot_change_the_ids_of_a_stored_episode(editor_client):
    episode = EpisodeFactory(guid="https://podd.example/?p=3")

    page = editor_client.get(f"/admin/podcasts/podcastepisode/{episode.pk}/change/").content
    text = page.decode()

    assert episode.episode_id in text and 'name="title"' in text
    assert 'name="episode_id"' not in text and 'name="guid"' not in text


def test_the_migration_gives_stored_episodes_path_ids_and_keeps_their_guid():
    # A row as it was before: the GUID was the id, no guid yet.
    before = EpisodeFactory(episode_id="https://podd.example/?p=7#x", guid="", title="Avsnitt 7")
    migration = importlib.import_module(
        "news_site.podcasts.migrations.0005_episode_guid_and_path_id"
    )

    migration.assign_path_ids(django_apps, None)

    after = PodcastEpisode.objects.get(pk=before.pk)
    assert after.guid == "https://podd.example/?p=7#x"
    assert after.episode_id == episode_id_for(guid=after.guid, title="Avsnitt 7")
