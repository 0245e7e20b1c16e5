"""An editor adds a source by pasting an address, the feed's or any page of the site: the feed
is found, takes its title and site from the feed, and is fetched at once by the worker."""

import pytest
from django_tasks_db.models import DBTaskResult

from news_site.news.discovery import DiscoveryError, DiscoveryProblem, feed_discover
from news_site.news.models import Entry, Feed, FetchOutcome
from news_site.news.tasks import feed_fetch_task

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]

FEED = b"""<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0"><channel><title>Sajtens nyheter</title><link>{site}</link>
<item><title>Apple visar nya iPad</title><link>{site}artikel/1</link><guid>a-1</guid>
<description>Apple har visat en ny iPad med M5.</description></item>
</channel></rss>"""


def _site(server, *, link: str | None) -> str:
    """A site whose home page links its feed (or not) and whose feed lives at /rss/site.xml."""
    site = server.url("/")
    head = f'<link rel="alternate" type="application/rss+xml" href="{link}">' if link else ""
    server.respond(
        "/",
        body=f"<html><head><title>Sajten</title>{head}</head><body>Hej</body></html>".encode(),
        headers={"Content-Type": "text/html; charset=utf-8"},
    )
    server.respond(
        "/rss/site.xml",
        body=FEED.replace(b"{site}", site.encode()),
        headers={"Content-Type": "application/rss+xml"},
    )
    return site


def test_a_page_that_links_its_feed_leads_to_the_feed(server, private_fetching):
    site = _site(server, link="/rss/site.xml")

    found = feed_discover(url=site)

    assert found.url == server.url("/rss/site.xml")
    assert found.title == "Sajtens nyheter"
    assert found.site_url == site


def test_a_feed_address_is_its_own_feed(server, private_fetching):
    _site(server, link=None)
    assert feed_discover(url=server.url("/rss/site.xml")).url == server.url("/rss/site.xml")


def test_a_site_without_a_link_is_tried_at_the_common_feed_paths(server, private_fetching):
    site = _site(server, link=None)
    server.respond(
        "/feed",
        body=FEED.replace(b"{site}", site.encode()),
        headers={"Content-Type": "application/rss+xml"},
    )
    assert feed_discover(url=site).url == server.url("/feed")


@pytest.mark.parametrize(
    ("make_address", "problem"),
    [
        (lambda server: server.url("/"), DiscoveryProblem.NO_FEED),
        (lambda server: server.url("/missing"), DiscoveryProblem.HTTP_ERROR),
        (lambda server: "javascript:alert(1)", DiscoveryProblem.INVALID_URL),
        (lambda server: "http://127.0.0.1:9/", DiscoveryProblem.UNREACHABLE),
    ],
    ids=["no-feed", "404", "not-http", "closed-port"],
)
def test_addresses_without_a_feed_say_why(server, private_fetching, make_address, problem):
    _site(server, link=None)
    with pytest.raises(DiscoveryError) as refused:
        feed_discover(url=make_address(server))
    assert refused.value.problem == problem


def test_a_private_address_is_refused_unless_the_operator_allows_it(server, settings):
    settings.FETCH_ALLOW_PRIVATE_NETWORKS = False
    with pytest.raises(DiscoveryError) as refused:
        feed_discover(url=server.url("/"))
    assert refused.value.problem == DiscoveryProblem.BLOCKED_ADDRESS


def test_an_editor_adds_a_site_by_its_address_and_the_worker_fetches_it_at_once(
    editor_client, server, private_fetching, django_capture_on_commit_callbacks
):
    site = _site(server, link="/rss/site.xml")
    form = editor_client.get("/admin/news/feed/add/").content.decode()
    assert 'name="title"' not in form  # the title comes from the feed

    with django_capture_on_commit_callbacks(execute=True):
        answer = editor_client.post(
            "/admin/news/feed/add/", {"url": site, "language": "sv", "kind": "articles"}
        )

    assert answer.status_code == 302, answer.content.decode()[:3000]
    feed = Feed.objects.get()
    assert (feed.url, feed.title, feed.site_url) == (
        server.url("/rss/site.xml"),
        "Sajtens nyheter",
        site,
    )
    job = DBTaskResult.objects.get()
    assert job.args_kwargs["args"] == [feed.pk]
    # What the worker runs for that job.
    assert feed_fetch_task.call(feed.pk) == FetchOutcome.OK
    assert Entry.objects.filter(feed=feed, title="Apple visar nya iPad").exists()


def test_an_address_without_a_feed_is_explained_in_swedish_and_nothing_is_added(
    editor_client, server, settings
):
    settings.FETCH_ALLOW_PRIVATE_NETWORKS = False
    answer = editor_client.post(
        "/admin/news/feed/add/",
        {"url": server.url("/"), "language": "sv", "kind": "articles"},
    )
    html = answer.content.decode()
    assert answer.status_code == 200
    assert "lokalt eller privat nät" in html and "FETCH_ALLOW_PRIVATE_NETWORKS" in html
    assert not Feed.objects.exists()


def test_fetch_now_queues_the_selected_sources(
    editor_client, make_feed, django_capture_on_commit_callbacks
):
    feeds = [make_feed(url=f"https://s{n}.example/feed") for n in range(3)]
    with django_capture_on_commit_callbacks(execute=True):
        answer = editor_client.post(
            "/admin/news/feed/",
            {"action": "fetch_now", "_selected_action": [feed.pk for feed in feeds[:2]]},
        )
    assert answer.status_code == 302
    queued = sorted(job.args_kwargs["args"][0] for job in DBTaskResult.objects.all())
    assert queued == sorted(feed.pk for feed in feeds[:2])
