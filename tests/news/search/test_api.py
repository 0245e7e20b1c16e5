"""GET /api/v1/entries/search over real HTTP: modes, validation and the per-IP limit."""

import pytest
from django.utils import timezone

from news_site.search.services import entries_embed

# Each test in a rolled-back transaction: requests run in-process (tests/support/inprocess.py).
pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]


def _corpus(make_feed, make_entry):
    feed = make_feed()
    return {
        "battery": make_entry(
            feed,
            title="iPhone 17 får större batteri",
            summary_translated="Apples nya iPhone har ett batteri som räcker två dagar.",
            summary_original="Apple's new iPhone has a battery that lasts two days.",
        ),
        "watch": make_entry(
            feed,
            title="Apple Watch mäter blodtryck",
            summary_translated="Klockan varnar för högt blodtryck.",
            summary_original="The watch warns about high blood pressure.",
        ),
        "hidden": make_entry(
            feed,
            title="Batteri i elbil",
            summary_translated="Ett batteri i en bil.",
            platform_relevant=False,
        ),
    }


def test_keyword_search_finds_swedish_words_when_semantic_is_off(
    http, make_feed, make_entry, keyword_only
):
    corpus = _corpus(make_feed, make_entry)

    response = http.get("/api/v1/entries/search", params={"q": "batteri"})

    assert response.status_code == 200
    body = response.json()
    assert body["meta"] == {"api_version": "v1", "mode": "keyword", "count": 1}
    assert [e["id"] for e in body["data"]] == [corpus["battery"].pk]
    assert set(body) == {"data", "meta"}
    assert set(body["data"][0]) >= {"id", "content", "click_count", "source_count"}


def test_keyword_search_ignores_lang_and_respects_limit(http, make_feed, make_entry, keyword_only):
    feed = make_feed()
    for n in range(5):
        make_entry(feed, title=f"iPad nyhet {n}")

    body = http.get("/api/v1/entries/search", params={"q": "iPad", "limit": 3, "lang": "xx"}).json()

    assert len(body["data"]) == 3


def test_keyword_search_fills_the_page_with_entries_that_have_some_of_the_words(
    http, make_feed, make_entry, keyword_only
):
    feed = make_feed()

    def entry(title: str, summary: str):
        return make_entry(feed, title=title, summary_original=summary, summary_translated=summary)

    both = entry("AirPods mäter puls", "Hörlurarna mäter puls under löpning.")
    pulse = entry("Klockan mäter puls", "Pulsmätning på handleden.")
    airpods = entry("Nya AirPods i höst", "Hörlurar med bättre ljud.")
    entry("Ny iPad presenterad", "En surfplatta med större skärm.")

    body = http.get("/api/v1/entries/search", params={"q": "AirPods puls"}).json()

    ids = [e["id"] for e in body["data"]]
    # The entry with every word first; then those with one of them; never one with none.
    assert ids[0] == both.pk
    assert sorted(ids[1:]) == sorted([pulse.pk, airpods.pk])


def test_keyword_search_leaves_out_a_word_excluded_with_a_minus(
    http, make_feed, make_entry, keyword_only
):
    feed = make_feed()
    walk = make_entry(feed, title="AirPods på promenaden", summary_original="Hörlurar.")
    make_entry(feed, title="AirPods för träning", summary_original="Hörlurar under träning.")

    body = http.get("/api/v1/entries/search", params={"q": "AirPods -träning"}).json()

    assert [e["id"] for e in body["data"]] == [walk.pk]


def test_semantic_search_finds_by_meaning_in_either_language(http, make_feed, make_entry, semantic):
    corpus = _corpus(make_feed, make_entry)
    assert entries_embed() == 2
    assert entries_embed() == 0

    english = http.get("/api/v1/entries/search", params={"q": "blood pressure smartwatch"}).json()
    swedish = http.get("/api/v1/entries/search", params={"q": "batteritid på telefonen"}).json()

    assert english["meta"]["mode"] == "semantic"
    assert english["data"][0]["id"] == corpus["watch"].pk
    assert swedish["meta"]["mode"] == "semantic"
    assert swedish["data"][0]["id"] == corpus["battery"].pk
    assert corpus["hidden"].pk not in {e["id"] for e in english["data"] + swedish["data"]}


def test_semantic_falls_back_to_keyword_when_it_finds_nothing(
    http, make_feed, make_entry, semantic
):
    # Nothing is embedded yet, so semantic search has no hits.
    corpus = _corpus(make_feed, make_entry)

    body = http.get("/api/v1/entries/search", params={"q": "blodtryck"}).json()

    assert body["meta"]["mode"] == "keyword"
    assert [e["id"] for e in body["data"]] == [corpus["watch"].pk]


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"q": ""},
        {"q": "   "},
        {"q": "x", "limit": 0},
        {"q": "x", "limit": 51},
        {"q": "x", "limit": ""},
    ],
)
def test_missing_or_empty_q_and_bad_limits_are_400(http, params, keyword_only):
    response = http.get("/api/v1/entries/search", params=params)

    assert response.status_code == 400
    assert response.json()["error"]["type"] == "invalid_parameter"


def test_thirty_searches_per_ten_minutes_per_address_then_429(http, keyword_only, one_window):
    for n in range(30):
        response = http.get("/api/v1/entries/search", params={"q": f"iphone {n}"})
        assert response.status_code == 200, n
    assert response.headers["X-RateLimit-Remaining"] == "0"

    limited = http.get("/api/v1/entries/search", params={"q": "iphone"})

    assert limited.status_code == 429
    assert limited.json()["error"]["type"] == "rate_limited"
    assert 0 < int(limited.headers["Retry-After"]) <= 600
    assert limited.headers["RateLimit-Policy"] == '"search";q=30;w=600'
    # Other endpoints are not limited by it.
    assert http.get("/api/v1/entries").status_code == 200


def test_behind_a_trusted_proxy_each_forwarded_client_has_its_own_budget(
    http, settings, keyword_only
):
    settings.TRUSTED_PROXIES = ["127.0.0.1"]
    settings.NEWS_SEARCH_RATE_LIMIT = "2/10m"

    def search(client: str) -> int:
        headers = {"X-Forwarded-For": client}
        return http.get("/api/v1/entries/search", params={"q": "x"}, headers=headers).status_code

    assert [search("203.0.113.1") for _ in range(3)] == [200, 200, 429]
    assert search("203.0.113.2") == 200


def test_an_untrusted_peer_cannot_spoof_its_address(http, settings, keyword_only):
    settings.TRUSTED_PROXIES = []
    settings.NEWS_SEARCH_RATE_LIMIT = "2/10m"

    statuses = [
        http.get(
            "/api/v1/entries/search",
            params={"q": "x"},
            headers={"X-Forwarded-For": f"198.51.100.{n}"},
        ).status_code
        for n in range(3)
    ]

    assert statuses == [200, 200, 429]


def test_new_and_changed_embeddings_reach_the_running_index(http, make_feed, make_entry, semantic):
    semantic.NEWS_SEMANTIC_REFRESH_SECONDS = 0
    corpus = _corpus(make_feed, make_entry)
    entries_embed()
    query = {"q": "blood pressure smartwatch"}
    assert http.get("/api/v1/entries/search", params=query).json()["data"][0]["id"] == (
        corpus["watch"].pk
    )

    # The editor rewrites the watch story into a camera story; the battery entry is new.
    watch = corpus["watch"]
    watch.title = "Kameran i iPhone får nattläge"
    watch.summary_translated = "Kameran tar bättre bilder i mörker."
    watch.summary_original = "The camera takes better photos in the dark."
    watch.summarised_at = timezone.now()
    watch.save()
    fresh = make_entry(
        make_feed(),
        title="Ny klocka varnar för högt blodtryck",
        summary_original="A new smartwatch warns about high blood pressure.",
    )
    assert entries_embed() == 2

    hits = [e["id"] for e in http.get("/api/v1/entries/search", params=query).json()["data"]]
    assert hits[0] == fresh.pk
    camera = http.get("/api/v1/entries/search", params={"q": "night mode camera photos"}).json()
    assert camera["data"][0]["id"] == watch.pk
