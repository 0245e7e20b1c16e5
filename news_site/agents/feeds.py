"""/entries.rss: the latest 50 vendor-relevant entries as RSS 2.0, with tags and images."""

import mimetypes
from datetime import datetime

from django.conf import settings
from django.contrib.syndication.views import Feed
from django.http import HttpRequest, HttpResponse
from django.utils.feedgenerator import Enclosure, Rss201rev2Feed

from news_site.agents.documents import credit
from news_site.agents.escaping import rss_html, safe_url, xml_text
from news_site.news import selectors
from news_site.news.http import public
from news_site.news.models import Entry

RSS_SIZE = 50


class LatestEntriesFeed(Feed):
    feed_type = Rss201rev2Feed
    link = "/"
    description = "Svenska sammanfattningar av nyheter om Apple och dess produkter."

    def __call__(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        response = super().__call__(request, *args, **kwargs)
        # Django dates the feed by its newest pubDate, which an entry listed later with an
        # older date does not move: If-Modified-Since would miss it. The date of the body
        # itself is shared/conditional.py's.
        del response["Last-Modified"]
        return public(response)

    def title(self) -> str:
        return settings.NEWS_SITE_NAME

    def items(self) -> list[Entry]:
        return list(selectors.entry_list()[:RSS_SIZE])

    def item_title(self, item: Entry) -> str:
        # Readers render titles as HTML as often as descriptions: escaped the same way.
        return rss_html(item.title)

    def item_description(self, item: Entry) -> str:
        # Readers decode <description> as HTML: our plain text goes in HTML-escaped.
        return rss_html(
            f"{item.swedish_summary} ({credit(item, site_name=settings.NEWS_SITE_NAME)})"
        )

    def item_link(self, item: Entry) -> str:
        # A stored link that is no longer acceptable points at our own page for the entry.
        return safe_url(item.url) or f"/entries/{item.pk}"

    def item_guid(self, item: Entry) -> str:
        return f"entry-{item.pk}"

    def item_guid_is_permalink(self, item: Entry) -> bool:
        return False

    def item_pubdate(self, item: Entry) -> datetime:
        return item.published_at or item.listed_at

    def item_author_name(self, item: Entry) -> str:
        # Written as <dc:creator>, which readers show next to the title: escaped like it.
        return rss_html(item.feed.title)

    def item_categories(self, item: Entry) -> list[str]:
        return [xml_text(tag.name) for tag in item.tags.all()]

    def item_enclosures(self, item: Entry) -> list[Enclosure]:
        image = safe_url(item.image_url)
        if not image:
            return []
        mime, _ = mimetypes.guess_type(image.split("?", 1)[0])
        # RSS requires a length; 0 is the usual value when it is unknown.
        return [Enclosure(image, "0", mime or "image/jpeg")]
