"""The full-text index keyword search uses on PostgreSQL (Swedish configuration), over the same
expression as news_site.search.selectors.PG_DOCUMENT. SQLite has no such index: its keyword
search is a plain match over the newest candidates."""

from django.db import migrations

_CREATE = """
CREATE INDEX IF NOT EXISTS search_entry_fulltext_sv ON news_entry USING GIN (
    to_tsvector('swedish'::regconfig,
        title || ' ' || summary_translated || ' ' || summary_original)
) WHERE platform_relevant
"""
_DROP = "DROP INDEX IF EXISTS search_entry_fulltext_sv"


def create(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(_CREATE)


def drop(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(_DROP)


class Migration(migrations.Migration):
    dependencies = [
        ("search", "0001_initial"),
        ("news", "0001_initial"),
    ]

    operations = [migrations.RunPython(create, drop)]
