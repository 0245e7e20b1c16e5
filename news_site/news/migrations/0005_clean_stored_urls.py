"""Rows stored before ingest cleaned its input: URLs that are not absolute http(s) URIs
(javascript:, data:, relative, spaces or quotes) are normalised or emptied, and titles lose the
characters XML and YAML cannot hold. Surfaces escape at output as well; this makes the stored
data match what ingest now stores, so /api/v1's `format: uri` holds for old rows too."""

from django.db import migrations

from news_site.news.cleaning import clean_text, clean_url


def clean_rows(apps, schema_editor):
    Entry = apps.get_model("news", "Entry")
    for entry in Entry.objects.only("pk", "url", "image_url", "title").iterator(chunk_size=2000):
        url = clean_url(entry.url) or entry.url
        image = clean_url(entry.image_url)
        title = clean_text(entry.title, max_length=500)
        if (url, image, title) != (entry.url, entry.image_url, entry.title):
            Entry.objects.filter(pk=entry.pk).update(url=url, image_url=image, title=title)
    Feed = apps.get_model("news", "Feed")
    for feed in Feed.objects.only("pk", "site_url", "title"):
        site = clean_url(feed.site_url)
        title = clean_text(feed.title, max_length=200)
        if (site, title) != (feed.site_url, feed.title):
            Feed.objects.filter(pk=feed.pk).update(site_url=site, title=title)


class Migration(migrations.Migration):
    dependencies = [("news", "0004_swedish_admin_labels")]

    operations = [migrations.RunPython(clean_rows, migrations.RunPython.noop, elidable=True)]
