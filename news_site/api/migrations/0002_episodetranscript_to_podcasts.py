"""EpisodeTranscript moved to the podcasts app; its table stays (podcasts 0001 adopts it)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("api", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="EpisodeTranscript")],
            database_operations=[],
        ),
    ]
