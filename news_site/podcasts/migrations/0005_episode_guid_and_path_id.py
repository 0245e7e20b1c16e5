"""Episodes keep their feed GUID in `guid` and get a path-safe `episode_id`: the GUID was the
id, and a GUID with `?`, `#` or `/` could not be linked. Old links keep working: a path that
names a GUID answers a permanent redirect to the episode's new path."""

from django.db import migrations, models

from news_site.podcasts.identifiers import episode_id_for


def assign_path_ids(apps, schema_editor):
    PodcastEpisode = apps.get_model("podcasts", "PodcastEpisode")
    for episode in PodcastEpisode.objects.only("episode_id", "title").iterator():
        episode.guid = episode.episode_id
        episode.episode_id = episode_id_for(guid=episode.guid, title=episode.title)
        episode.save(update_fields=["guid", "episode_id"])


def restore_guid_ids(apps, schema_editor):
    PodcastEpisode = apps.get_model("podcasts", "PodcastEpisode")
    for episode in PodcastEpisode.objects.only("guid").iterator():
        episode.episode_id = episode.guid
        episode.save(update_fields=["episode_id"])


class Migration(migrations.Migration):
    dependencies = [
        ("podcasts", "0004_episode_transcript_failures"),
    ]

    operations = [
        migrations.AddField(
            model_name="podcastepisode",
            name="guid",
            field=models.CharField(default="", max_length=200, verbose_name="GUID in the feed"),
            preserve_default=False,
        ),
        migrations.RunPython(assign_path_ids, restore_guid_ids),
        migrations.AlterField(
            model_name="podcastepisode",
            name="guid",
            field=models.CharField(max_length=200, unique=True, verbose_name="GUID in the feed"),
        ),
    ]
