"""Emptied: this migration wrote the admin's Swedish labels into the schema state. The labels
are English in the code now and Swedish in the translation catalogue (news_site/locale), so the
migrations hold no Swedish; the migration keeps its name so that databases that applied it stay
consistent. It never changed a table or a row."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("news", "0004_swedish_admin_labels"),
        ("search", "0002_entry_fulltext_index"),
    ]

    operations = []
