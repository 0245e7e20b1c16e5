"""PodcastEpisode moves here from the news app; its table (news_podcastepisode) stays and no
data moves. news 0003 then drops the model from the news app's state. The content types of
both moved models are relabelled, so editors' permissions and the admin's history follow."""

import django.db.models.deletion
import django.utils.timezone
from django.db import migrations, models

_MOVED = (("news", "podcastepisode"), ("api", "episodetranscript"))


def _content_types_relabel(apps, schema_editor) -> None:
    content_type = apps.get_model("contenttypes", "ContentType")
    for old_label, model in _MOVED:
        if not content_type.objects.filter(app_label="podcasts", model=model).exists():
            content_type.objects.filter(app_label=old_label, model=model).update(
                app_label="podcasts"
            )


def _content_types_restore(apps, schema_editor) -> None:
    content_type = apps.get_model("contenttypes", "ContentType")
    for old_label, model in _MOVED:
        content_type.objects.filter(app_label="podcasts", model=model).update(app_label=old_label)


class Migration(migrations.Migration):
    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("news", "0002_story_clustering"),
        ("podcasts", "0001_initial"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="PodcastEpisode",
                    fields=[
                        (
                            "id",
                            models.BigAutoField(
                                auto_created=True,
                                primary_key=True,
                                serialize=False,
                                verbose_name="ID",
                            ),
                        ),
                        ("episode_id", models.CharField(max_length=200, unique=True)),
                        ("title", models.CharField(max_length=300)),
                        ("description", models.TextField(blank=True)),
                        ("published_on", models.DateField(blank=True, null=True)),
                        ("duration_seconds", models.PositiveIntegerField(blank=True, null=True)),
                        ("page_url", models.URLField(blank=True, max_length=2000)),
                        ("audio_url", models.URLField(blank=True, max_length=2000)),
                        ("cover_url", models.URLField(blank=True, max_length=2000)),
                        ("cover_thumb_url", models.URLField(blank=True, max_length=2000)),
                        ("chapters_url", models.URLField(blank=True, max_length=2000)),
                        ("chapters", models.JSONField(blank=True, default=list)),
                        ("sources", models.JSONField(blank=True, default=list)),
                        ("transcript_url", models.URLField(blank=True, max_length=2000)),
                        ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                        (
                            "feed",
                            models.ForeignKey(
                                blank=True,
                                null=True,
                                on_delete=django.db.models.deletion.SET_NULL,
                                related_name="episodes",
                                to="news.feed",
                            ),
                        ),
                    ],
                    options={
                        "db_table": "news_podcastepisode",
                        "ordering": ["-published_on", "-id"],
                    },
                ),
                migrations.AlterField(
                    model_name="episodetranscript",
                    name="episode",
                    field=models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="transcript",
                        serialize=False,
                        to="podcasts.podcastepisode",
                    ),
                ),
            ],
            database_operations=[],
        ),
        migrations.RunPython(_content_types_relabel, _content_types_restore),
    ]
