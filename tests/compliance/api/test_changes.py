"""GET /changes: filters, keyset pages, tamper-proof cursors and sync tokens."""

import threading
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compliance_site.api.serializers import ChangeEventSerializer, VersionListItemSerializer
from compliance_site.records.documents import JURISDICTIONS
from compliance_site.records.models import ResourceVersion
from compliance_site.records.reindex import reindex
from tests.compliance.builders import ESA, state_payload

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]

EVENT_FIELDS = {
    "resource_type",
    "resource_key",
    "version",
    "released_at",
    "git_sha",
    "committed_at",
    "git_committed_at",
    "committed_by",
    "change_summary",
    "source",
    "diff",
}


@pytest.fixture
def feed(data_repo, run_reindex):
    """Ten states seeded in one commit (30 events with TX's ESA), then six edits."""
    abbrs = ["AL", "AK", "AZ", "CA", "CO", "FL", "NY", "OH", "TX", "UT"]
    for abbr in abbrs:
        extra = {"esa_program": ESA} if abbr == "TX" else {}
        data_repo.write(abbr, state_payload(abbr, **extra))
    data_repo.commit("Seed ten states")
    for abbr in ["TX", "CA", "TX", "OH", "FL", "TX"]:
        data_repo.update(abbr, summary=f"Edit of {abbr} at {data_repo.clock.isoformat()}")
    run_reindex()
    return data_repo


def walk(api, **params):
    """Every event of the feed, page by page."""
    events, cursor, pages = [], None, 0
    while True:
        query = dict(params, **({"cursor": cursor} if cursor else {}))
        response = api.get("/changes", params=query)
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["meta"]["count"] == len(body["data"])
        events.extend(body["data"])
        pages += 1
        cursor = body["meta"].get("next_cursor")
        if cursor is None:
            return events, pages


def key(event):
    return (event["resource_type"], event["resource_key"], event["version"])


def test_events_are_newest_first_with_the_spec_fields(api, feed):
    body = api.get("/changes").json()

    assert body["meta"]["count"] == 27
    assert "next_cursor" not in body["meta"]
    assert all(set(event) == EVENT_FIELDS for event in body["data"])
    stamps = [datetime.fromisoformat(e["committed_at"]) for e in body["data"]]
    assert stamps == sorted(stamps, reverse=True)
    newest = body["data"][0]
    assert newest["resource_key"] == "TX"
    assert newest["resource_type"] == "State"
    assert newest["version"] == 4
    assert newest["diff"]["changed_keys"] == ["summary"]


def test_paging_yields_every_event_once(api, feed):
    events, pages = walk(api, limit=4)

    assert pages == 7
    assert len(events) == 27
    assert len({key(e) for e in events}) == 27
    assert events == api.get("/changes", params={"limit": 500}).json()["data"]


def test_filters_by_resource_type_and_since(api, feed):
    esa = api.get("/changes", params={"resource_type": "EsaProgram"}).json()["data"]
    assert [key(e) for e in esa] == [("EsaProgram", "TX", 1)]

    since = "2026-01-08T09:00:00-05:00"
    recent = api.get("/changes", params={"since": since}).json()["data"]
    assert recent
    assert all(
        datetime.fromisoformat(e["committed_at"]) >= datetime.fromisoformat(since) for e in recent
    )
    assert api.get("/changes", params={"since": "2026-01-08T14:00:00Z"}).json()["data"] == recent


def test_a_cursor_is_bound_to_its_filters(api, feed):
    first = api.get("/changes", params={"limit": 2, "resource_type": "State"}).json()
    cursor = first["meta"]["next_cursor"]

    response = api.get("/changes", params={"limit": 2, "cursor": cursor})

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_cursor"


@pytest.mark.parametrize(
    "cursor",
    [
        "garbage",
        "x" * 513,
        "eyJ2IjoxfQ:1abcde:forged-signature",
        "%00%01",
        "🙂" * 20,
    ],
)
def test_forged_or_garbled_cursors_get_400(api, feed, cursor):
    response = api.get("/changes", params={"cursor": cursor})

    assert response.status_code == 400
    assert response.json()["error"]["code"] in {"invalid_cursor", "invalid_parameter"}


def test_an_empty_cursor_means_the_first_page(api, feed):
    assert api.get("/changes", params={"cursor": ""}).json() == api.get("/changes").json()


def test_a_cursor_with_one_changed_character_is_rejected(api, feed):
    cursor = api.get("/changes", params={"limit": 2}).json()["meta"]["next_cursor"]
    tampered = cursor[:-3] + ("A" if cursor[-3] != "A" else "B") + cursor[-2:]

    assert api.get("/changes", params={"cursor": tampered}).status_code == 400


@pytest.mark.parametrize(
    "params",
    [
        {"limit": "0"},
        {"limit": "501"},
        {"limit": "abc"},
        {"limit": "-5"},
        {"resource_type": "Planet"},
        {"resource_type": "state"},
        {"since": "2026-02-30T00:00:00Z"},
        {"since": "not a date"},
        {"since": "9" * 100},
    ],
)
def test_bad_parameters_get_400(api, feed, params):
    response = api.get("/changes", params=params)

    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_parameter"


def test_limit_bounds_are_inclusive(api, feed):
    assert api.get("/changes", params={"limit": 1}).json()["meta"]["count"] == 1
    assert api.get("/changes", params={"limit": 500}).json()["meta"]["count"] == 27


def test_default_limit_is_100(api, data_repo, run_reindex):
    abbrs = sorted(JURISDICTIONS)[:25]
    for abbr in abbrs:
        data_repo.write(abbr, state_payload(abbr, esa_program=ESA))
    data_repo.commit("Seed 25 states with ESA programs")
    for abbr in abbrs:
        data_repo.write(abbr, state_payload(abbr, summary="Second version."))
    data_repo.commit("Edit all")
    run_reindex()

    body = api.get("/changes").json()

    assert body["meta"]["count"] == 100
    assert "next_cursor" in body["meta"]


def test_new_versions_published_while_paging_do_not_shift_the_walk(api, feed, data_repo):
    first = api.get("/changes", params={"limit": 5}).json()
    data_repo.update("UT", summary="Published mid-walk.")
    data_repo.write("NY", state_payload("NY", summary="Backdated mid-walk."))
    data_repo.commit("Backdated", when=datetime(2026, 1, 1, tzinfo=UTC))
    reindex(repo_path=str(data_repo.path))

    rest, _pages = walk_from(api, first["meta"]["next_cursor"], limit=5)
    events = first["data"] + rest

    assert len(events) == 27
    assert len({key(e) for e in events}) == 27
    assert ("State", "UT", 2) not in {key(e) for e in events}


def walk_from(api, cursor, **params):
    events, pages = [], 0
    while cursor:
        body = api.get("/changes", params=dict(params, cursor=cursor)).json()
        events.extend(body["data"])
        cursor = body["meta"].get("next_cursor")
        pages += 1
    return events, pages


def test_a_sync_token_returns_exactly_what_was_published_after_it(api, feed, data_repo):
    token = api.get("/changes").json()["meta"]["sync_token"]
    data_repo.update("CA", summary="After the token.")
    data_repo.write(
        "NY",
        state_payload("NY", summary="Backdated after the token.", last_verified_at="2025-01-01"),
    )
    data_repo.commit("Backdated", when=datetime(2025, 1, 1, tzinfo=UTC))
    reindex(repo_path=str(data_repo.path))

    body = api.get("/changes", params={"sync_token": token}).json()

    assert sorted(key(e) for e in body["data"]) == [("State", "CA", 3), ("State", "NY", 2)]
    assert api.get("/changes", params={"sync_token": "forged"}).status_code == 400


def test_a_page_costs_a_fixed_number_of_queries(api, feed, served_queries):
    with served_queries.at_most(3):
        assert api.get("/changes", params={"limit": 500}).status_code == 200


# The publisher thread writes on its own connection, which sees committed rows only.
@pytest.mark.django_db(transaction=True)
@settings(
    max_examples=15,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(limit=st.integers(min_value=1, max_value=12), start_page=st.integers(0, 5))
def test_every_cursor_yields_an_exact_suffix_while_reindex_publishes(api, feed, limit, start_page):
    """Like Kubernetes' watch-consistency test: resuming from any cursor gives exactly the rest
    of the snapshot the walk began in, with no gap and no duplicate, even while new versions,
    some of them backdated, are published concurrently."""
    snapshot = api.get("/changes", params={"limit": 500}).json()["data"]
    pages = [api.get("/changes", params={"limit": limit}).json()]
    while "next_cursor" in pages[-1]["meta"] and len(pages) <= start_page:
        cursor = pages[-1]["meta"]["next_cursor"]
        pages.append(api.get("/changes", params={"limit": limit, "cursor": cursor}).json())
    seen = [event for page in pages for event in page["data"]]
    cursor = pages[-1]["meta"].get("next_cursor")

    publisher = threading.Thread(target=_publish_more, args=(feed,))
    publisher.start()
    rest, _ = walk_from(api, cursor, limit=limit)
    publisher.join()

    assert seen + rest == snapshot


def _publish_more(data_repo) -> None:
    try:
        for offset in (1, -400):
            stamp = data_repo.clock + timedelta(days=offset)
            data_repo.write("AK", state_payload("AK", summary=f"Concurrent {stamp.isoformat()}"))
            data_repo.commit("Concurrent edit", when=stamp)
            reindex(repo_path=str(data_repo.path))
    finally:
        # This thread's own database connection would otherwise outlive the test database.
        connection.close()


def test_the_sequence_is_unique_across_events(feed):
    sequences = list(ResourceVersion.objects.values_list("sequence", flat=True))

    assert len(sequences) == len(set(sequences)) == 27


def test_events_have_exactly_the_fields_the_schema_documents(api, feed):
    event = api.get("/changes", params={"limit": 1}).json()["data"][0]
    version = api.get("/states/TX/versions").json()["data"][0]

    assert set(event) == set(ChangeEventSerializer().fields)
    assert set(version) == set(VersionListItemSerializer().fields)
    assert ChangeEventSerializer(data=event).is_valid()


def test_cursors_and_sync_tokens_survive_a_key_rotation(api, feed, settings):
    """Integrators keep a sync token for months; rotating SECRET_KEY (the old one moved to
    SECRET_KEY_FALLBACKS) must not turn it into invalid_cursor."""
    settings.SECRET_KEY = "the-key-before-rotation-" + "x" * 30
    first = api.get("/changes", params={"limit": 5}).json()
    cursor, token = first["meta"]["next_cursor"], first["meta"]["sync_token"]

    settings.SECRET_KEY, settings.SECRET_KEY_FALLBACKS = (
        "the-new-key-" + "y" * 40,
        [settings.SECRET_KEY],
    )
    assert api.get("/changes", params={"cursor": cursor, "limit": 5}).status_code == 200
    assert api.get("/changes", params={"sync_token": token}).status_code == 200

    settings.SECRET_KEY_FALLBACKS = []  # once retired for good, they are refused
    refused = api.get("/changes", params={"sync_token": token})
    assert refused.status_code == 400
    assert refused.json()["error"]["code"] == "invalid_cursor"


def test_polling_is_conditional_and_each_page_links_the_next(api, feed, data_repo, run_reindex):
    first = api.get("/changes", params={"limit": 5})
    etag, last_modified = first.headers["ETag"], first.headers["Last-Modified"]
    cursor = first.json()["meta"]["next_cursor"]

    assert etag.startswith('"')
    assert first.headers["Cache-Control"] == "private, no-cache"
    assert first.headers["X-Poll-Interval"] == "60"
    link, rel = first.headers["Link"].split("; ")
    assert rel == 'rel="next"'
    followed = api.get(link.strip("<>"))
    assert followed.json() == api.get("/changes", params={"limit": 5, "cursor": cursor}).json()
    second_etag = followed.headers["ETag"]
    for validator in ({"If-None-Match": etag}, {"If-Modified-Since": last_modified}):
        repeat = api.get("/changes", params={"limit": 5}, headers=validator)
        assert repeat.status_code == 304
        assert repeat.content == b""
        assert repeat.headers["ETag"] == etag
        assert repeat.headers["X-Poll-Interval"] == "60"

    data_repo.update("NY", summary="Published while a client polls")
    run_reindex()

    for validator in ({"If-None-Match": etag}, {"If-Modified-Since": last_modified}):
        assert api.get("/changes", params={"limit": 5}, headers=validator).status_code == 200
    # A later page of the walk is pinned to the feed as it stood: its body, so its ETag, stay.
    pinned = api.get(link.strip("<>"), headers={"If-None-Match": second_etag})
    assert pinned.status_code == 304


def test_the_last_page_has_no_next_link(api, feed):
    last = api.get("/changes", params={"limit": 500})

    assert last.json()["meta"].get("next_cursor") is None
    assert "Link" not in last.headers
    assert last.headers["X-Poll-Interval"] == "60"
