"""PodcastEpisode moved to the podcasts app (podcasts 0002 adopted its table); only the news
app's state forgets it, no table changes."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("news", "0002_story_clustering"),
        ("podcasts", "0002_podcastepisode_from_news"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="PodcastEpisode")],
            database_operations=[],
        ),
    ]
