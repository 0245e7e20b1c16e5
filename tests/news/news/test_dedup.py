"""Layered deduplication: GUID per feed, canonical URL across feeds, content fingerprint."""

import pytest

from news_site.ingest.services import ingest_run
from news_site.news.feeds import feed_refresh
from news_site.news.models import Entry, SummaryState
from news_site.news.text import canonical_url

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]


def _item(guid: str, link: str, text: str = "Apple släpper iOS 19. Det är stort.") -> dict:
    return {"guid": guid, "link": link, "title": "Apple släpper iOS 19", "description": text}


def test_tracking_parameters_fragments_and_www_do_not_make_a_new_url():
    assert canonical_url(
        "http://www.Example.com/a/b?utm_source=x&id=3&fbclid=y&b=1#comments"
    ) == canonical_url("https://example.com/a/b?b=1&id=3")


def test_the_same_article_from_two_feeds_is_stored_once(server, private_fetching, make_feed, rss):
    server.respond("/one.xml", body=rss([_item("1", "https://mac.example/ios?utm_source=rss")]))
    server.respond("/two.xml", body=rss([_item("x-9", "https://www.mac.example/ios")]))
    feeds = {make_feed(url=server.url("/one.xml")), make_feed(url=server.url("/two.xml"))}

    report = ingest_run()

    # Sources are fetched in parallel: whichever answered first keeps the article.
    assert report.entries_new == 1
    assert Entry.objects.get().feed in feeds


def test_duplicate_guids_within_a_feed_fall_back_to_the_link(
    server, private_fetching, make_feed, rss
):
    server.respond(
        "/feed.xml",
        body=rss(
            [
                _item("same", "https://mac.example/a"),
                _item("same", "https://mac.example/b"),
                _item("", "https://mac.example/c"),
            ]
        ),
    )
    make_feed(url=server.url("/feed.xml"))

    ingest_run()

    assert Entry.objects.count() == 3
    assert Entry.objects.filter(guid__startswith="url:").count() == 3


def test_refetching_an_unchanged_item_does_not_ask_for_a_new_summary(
    server, private_fetching, make_feed, rss
):
    server.respond("/feed.xml", body=rss([_item("1", "https://mac.example/a")]))
    feed = make_feed(url=server.url("/feed.xml"))
    feed_refresh(feed=feed)
    Entry.objects.update(
        summary_state=SummaryState.TRANSLATED,
        summary_fingerprint=Entry.objects.get().content_fingerprint,
    )
    # Only whitespace and markup differ; the body hash differs, so the feed is parsed again.
    server.respond(
        "/feed.xml",
        body=rss(
            [_item("1", "https://mac.example/a", "<p>Apple släpper  iOS 19.</p> Det är stort.")]
        ),
    )

    feed_refresh(feed=feed)

    entry = Entry.objects.get()
    assert entry.summary_fingerprint == entry.content_fingerprint


def test_an_edited_article_is_marked_for_a_new_summary(server, private_fetching, make_feed, rss):
    server.respond("/feed.xml", body=rss([_item("1", "https://mac.example/a")]))
    feed = make_feed(url=server.url("/feed.xml"))
    feed_refresh(feed=feed)
    Entry.objects.update(
        summary_state=SummaryState.TRANSLATED,
        summary_fingerprint=Entry.objects.get().content_fingerprint,
    )
    server.respond(
        "/feed.xml",
        body=rss([_item("1", "https://mac.example/a", "Apple skjuter upp iOS 19. Det är stort.")]),
    )

    feed_refresh(feed=feed)

    entry = Entry.objects.get()
    assert entry.summary_fingerprint != entry.content_fingerprint


@pytest.mark.parametrize("carried", [5, 45])
def test_items_carried_over_unchanged_cost_no_statement(
    server, private_fetching, make_feed, rss, django_assert_max_num_queries, carried
):
    """A document mostly repeats what it carried last time: the statements of its next fetch
    do not grow with the number of carried items, only the new ones are written."""
    old = [_item(str(n), f"https://mac.example/{n}") for n in range(carried)]
    server.respond("/feed.xml", body=rss(old))
    feed = make_feed(url=server.url("/feed.xml"))
    feed_refresh(feed=feed)
    new = [_item(f"new-{n}", f"https://mac.example/new-{n}") for n in range(5)]
    server.respond("/feed.xml", body=rss(new + old))

    # The feed's row, the lookup of the document's keys, the new items (three statements),
    # the feed's validators and health: far fewer than one statement per carried item.
    with django_assert_max_num_queries(15):
        refresh = feed_refresh(feed=feed)

    assert refresh.entries_new == 5
    assert Entry.objects.filter(feed=feed).count() == carried + 5
