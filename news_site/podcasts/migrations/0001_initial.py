"""Adopts the transcript table the api app created (api 0001); no data moves."""

import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("news", "0001_initial"),
        ("api", "0002_episodetranscript_to_podcasts"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="EpisodeTranscript",
                    fields=[
                        (
                            "episode",
                            models.OneToOneField(
                                on_delete=django.db.models.deletion.CASCADE,
                                primary_key=True,
                                related_name="transcript",
                                serialize=False,
                                to="news.podcastepisode",
                            ),
                        ),
                        ("text", models.TextField()),
                        ("content_type", models.CharField(blank=True, max_length=100)),
                        ("fetched_at", models.DateTimeField(default=django.utils.timezone.now)),
                    ],
                    options={"db_table": "api_episodetranscript"},
                ),
            ],
            database_operations=[],
        ),
    ]
