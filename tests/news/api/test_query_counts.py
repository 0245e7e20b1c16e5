"""Database queries per /api/v1 request: a fixed number for every list and detail endpoint,
with and without a token, whatever the page size (or the number of entries in a story).

The exact counts are part of the contract with the benchmark (benchmarks/news_personal_bench.py):
a per-entry query (a relation fetched lazily in a serializer) would show here first as a count
that grows from page size 1 to 50. Each expected figure says what its queries are.

A token and its account's follows are read from the database on the token's first request in
a process and then kept (news_site/accounts/tokens.py), so a Bearer request costs what an
anonymous one does; test_a_tokens_first_request_reads_it_and_its_follows counts that first
read.
"""

from collections.abc import Iterator
from datetime import date

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from news_site.accounts.models import Follow
from tests.support.news_factories import (
    EntryFactory,
    EpisodeFactory,
    FeedFactory,
    FollowFactory,
    StoryFactory,
    TagFactory,
    account_with_token,
)

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]

# A token's first request reads it with its account and the account's generation, in one
# statement: a logout committed later raises the generation past that copy's.
FIRST_TOKEN = 1
# Every later Bearer request reads its account's generation by primary key, so a revocation made
# while Redis was unreachable still counts (news_site/accounts/tokens.py).
GENERATION = 1


@pytest.fixture(scope="module")
def world(django_db_setup, django_db_blocker) -> Iterator[dict]:
    """60 entries over 3 sources with 2 tags each, a story chain, episodes, and an account
    that follows two of the sources. Made once for the module, in a transaction rolled back at
    its end: each test runs in a savepoint inside it (pytest-django's `db`), so what a test
    writes is gone before the next one."""
    with django_db_blocker.unblock(), transaction.atomic():
        feeds = [
            FeedFactory(title=f"Källa {n}", site_url=f"https://k{n}.example") for n in range(3)
        ]
        tags = [TagFactory(name=f"Ämne {n}") for n in range(4)]
        older = StoryFactory(title="Föregångare", slug="foregangare", entries_count=1)
        story = StoryFactory(
            title="iPhone 18", slug="iphone-18", entries_count=60, predecessor=older
        )
        for n in range(3):
            StoryFactory(title=f"Uppföljare {n}", slug=f"uppfoljare-{n}", predecessor=story)
        small = StoryFactory(title="Liten", slug="liten", entries_count=1)
        entries = [
            EntryFactory(feed=feeds[n % 3], tags=[tags[n % 4], tags[(n + 1) % 4]], story=story)
            for n in range(59)
        ]
        entries.append(EntryFactory(feed=feeds[0], tags=[tags[0]], story=small))
        for n in range(60):
            EpisodeFactory(
                episode_id=f"ep-{n}", title=f"Avsnitt {n}", published_on=date(2026, 1, 1 + n % 28)
            )
        account, auth = account_with_token()
        Follow.objects.bulk_create(Follow(account=account, feed=feed) for feed in feeds[:2])
        yield {
            "feed": feeds[0],
            "tag": tags[0],
            "story": story,
            "small": small,
            "auth": auth,
            "entry": entries[0],
        }
        transaction.set_rollback(True)


def queries(client, path: str, headers: dict[str, str] | None = None) -> int:
    """How many queries one GET of `path` makes; it must answer 200."""
    with CaptureQueriesContext(connection) as captured:
        response = client.get(path, headers=headers or {})
    assert response.status_code == 200, (path, response.content[:300])
    return len(captured.captured_queries)


# (path, queries, what they are)
LISTS = [
    ("/api/v1/entries", 2, "the page; its tags"),
    ("/api/v1/entries?sort=popular", 2, "the page; its tags"),
    ("/api/v1/entries/popular", 2, "the page; its tags"),
    ("/api/v1/feeds", 1, "the page (the counts are cached, see below)"),
    ("/api/v1/feeds/{feed}/entries", 3, "the source; the page; its tags"),
    ("/api/v1/tags", 1, "the page with counts"),
    ("/api/v1/tags/{tag}/entries", 3, "the tag; the page; its tags"),
    ("/api/v1/stories", 1, "the page"),
    ("/api/v1/podd_episodes", 1, "the page"),
]


def _path(template: str, world: dict) -> str:
    return template.format(feed=world["feed"].pk, tag=world["tag"].slug)


@pytest.mark.parametrize(("template", "expected", "what"), LISTS)
@pytest.mark.parametrize("with_token", [False, True], ids=["anonymous", "bearer"])
def test_list_queries_are_constant_in_page_size(
    client, world, template, expected, what, with_token
):
    path = _path(template, world)
    headers = world["auth"] if with_token else None
    joiner = "&" if "?" in path else "?"
    # The per-source counts are computed once a minute for everyone, the token and its
    # follows on its first request; a first request does both.
    client.get(f"{path}{joiner}per_page=2", headers=headers or {})
    # Distinct URLs, so that no kept page answers the second one.
    one = queries(client, f"{path}{joiner}per_page=1", headers)
    fifty = queries(client, f"{path}{joiner}per_page=50", headers)
    expected += GENERATION if with_token else 0
    assert (one, fifty) == (expected, expected), what


def test_a_tokens_first_request_reads_it_and_its_follows(client, world):
    # The token twice (see FIRST_TOKEN); the follows; the page; the counts (cold).
    assert queries(client, "/api/v1/feeds", world["auth"]) == FIRST_TOKEN + 1 + 1 + 1
    # Then neither the token nor the follows, only its generation: the page is kept too.
    assert queries(client, "/api/v1/feeds", world["auth"]) == GENERATION


@pytest.mark.parametrize("per_page", [1, 50])
def test_followed_entries_queries_are_constant_in_page_size(client, world, per_page):
    client.get("/api/v1/entries/follows?per_page=2", headers=world["auth"])
    # The page of the followed sources' entries; its tags.
    path = f"/api/v1/entries/follows?per_page={per_page}"
    assert queries(client, path, world["auth"]) == 2 + GENERATION
    # Indented JSON is a page of its own, kept like the others (its key once held a space,
    # which the cache refused).
    indented = {**world["auth"], "Accept": "application/json; indent=2"}
    assert queries(client, path, indented) == 2 + GENERATION
    assert queries(client, path, indented) == GENERATION


def test_followed_entries_page_holds_only_followed_sources(client, world):
    # The count above must not come from an empty page.
    response = client.get("/api/v1/entries/follows?per_page=50", headers=world["auth"])
    sources = {item["feed"]["id"] for item in response.json()["data"]}
    assert len(response.json()["data"]) == 41
    assert world["feed"].pk in sources and len(sources) == 2


# (path, queries, what they are)
DETAILS = [
    # A repeated open (the view already counted today); the first open's counting is below.
    ("/api/v1/entries/{entry}", 2, "the entry; its tags"),
    ("/api/v1/feeds/{feed}", 1, "the source (its count cached)"),
    ("/api/v1/tags/{tag}", 1, "the tag with its count"),
    (
        "/api/v1/stories/{story}",
        4,
        "the story with its predecessor; its successors; its entries; their tags",
    ),
    ("/api/v1/podd_episodes/ep-1", 1, "the episode"),
    ("/api/v1/podd_episodes/ep-1?include_transcript=true", 2, "the episode; its transcript"),
]


@pytest.mark.parametrize(("template", "expected", "what"), DETAILS)
@pytest.mark.parametrize("with_token", [False, True], ids=["anonymous", "bearer"])
def test_detail_queries(client, world, template, expected, what, with_token):
    path = template.format(
        entry=world["entry"].pk,
        feed=world["feed"].pk,
        tag=world["tag"].slug,
        story=world["story"].pk,
    )
    headers = world["auth"] if with_token else None
    client.get(path, headers=headers or {})
    expected += GENERATION if with_token else 0
    assert queries(client, path, headers) == expected, what


def test_entry_detail_first_open_adds_only_the_view_count(client, world):
    # The first open of the day writes the view (its row and the entry's counter, in one
    # transaction); the reads stay those of a repeated open.
    path = f"/api/v1/entries/{world['entry'].pk}"
    with CaptureQueriesContext(connection) as first:
        client.get(path)
    with CaptureQueriesContext(connection) as repeat:
        client.get(path)
    reads = [q["sql"] for q in repeat.captured_queries]
    writes = [q["sql"] for q in first.captured_queries if q["sql"] not in reads]
    assert len(reads) == 2
    assert writes and all("entry" in sql.lower() or "savepoint" in sql.lower() for sql in writes)
    assert any(sql.lstrip().upper().startswith("UPDATE") for sql in writes)


def test_story_detail_queries_do_not_grow_with_its_entries(client, world):
    # A story of 59 entries over 3 sources and 3 successors costs what a story of one entry
    # and no successor does.
    big = queries(client, f"/api/v1/stories/{world['story'].pk}")
    small = queries(client, f"/api/v1/stories/{world['small'].pk}")
    assert big == small


def test_feed_counts_cost_one_query_a_minute(client, world):
    # Cold: the sources and the counts; then the counts come from the cache for everyone.
    assert queries(client, "/api/v1/feeds?per_page=1") == 2
    assert queries(client, "/api/v1/feeds?per_page=50") == 1
    answer = client.get("/api/v1/feeds?per_page=3", headers=world["auth"]).json()["data"]
    assert [feed["entries_count"] for feed in answer] == [21, 20, 19]
    assert [feed["is_following"] for feed in answer] == [True, True, False]


@pytest.mark.parametrize(
    ("path", "lookups"),
    [
        ("/api/v1/entries?per_page=50", 0),
        ("/api/v1/entries?per_page=50&sort=popular", 0),
        ("/api/v1/entries/popular?per_page=50", 0),
        ("/api/v1/entries/follows?per_page=50", 0),
        ("/api/v1/feeds", 0),
        # The source or tag is still looked up, so that a removed one answers 404 at once.
        ("/api/v1/feeds/{feed}/entries?per_page=50", 1),
        ("/api/v1/tags/{tag}/entries?per_page=50", 1),
    ],
)
def test_a_repeated_page_costs_a_bearer_caller_only_its_generation(client, world, path, lookups):
    path = _path(path, world)
    first = client.get(path, headers=world["auth"])
    assert queries(client, path, world["auth"]) == lookups + GENERATION
    assert client.get(path, headers=world["auth"]).content == first.content


def test_followed_pages_hold_only_the_callers_sources(client, world, make_account):
    path = "/api/v1/entries/follows?per_page=50"
    first = client.get(path, headers=world["auth"]).json()["data"]
    other, other_auth = make_account("bo@example.se")
    FollowFactory(account=other, feed=world["feed"])
    theirs = client.get(path, headers=other_auth).json()["data"]
    assert {item["feed"]["id"] for item in theirs} == {world["feed"].pk}
    assert len(theirs) == 21 and len(first) == 41
    # An unfollow changes the caller's page at once.
    unfollowed = client.delete(f"/api/v1/feeds/{world['feed'].pk}/follow", headers=other_auth)
    assert unfollowed.status_code == 200
    assert client.get(path, headers=other_auth).json()["data"] == []
    # The first caller's page is as it was.
    assert client.get(path, headers=world["auth"]).json()["data"] == first


def test_callers_following_the_same_sources_share_the_page(client, world, make_account):
    path = "/api/v1/entries/follows?per_page=50"
    mine = client.get(path, headers=world["auth"]).json()["data"]
    other, other_auth = make_account("bo@example.se")
    for follow in Follow.objects.filter(account__email="anna@example.se"):
        FollowFactory(account=other, feed=follow.feed)
    client.get("/api/v1/entries?per_page=1", headers=other_auth)  # the token's first request
    # Only the caller's follows are read; the page is the one already rendered.
    assert queries(client, path, other_auth) == 1 + GENERATION
    assert client.get(path, headers=other_auth).json()["data"] == mine
