from django.db import migrations, models
from django.db.models import F


def _keep_git_dates(apps, schema_editor):
    # Versions published before this migration carry git's date as their committed_at.
    version = apps.get_model("records", "ResourceVersion")
    version.objects.update(git_committed_at=F("committed_at"))


class Migration(migrations.Migration):
    dependencies = [
        ("records", "0002_reindex_run"),
    ]

    operations = [
        migrations.AddField(
            model_name="resourceversion",
            name="git_committed_at",
            field=models.DateTimeField(null=True),
        ),
        migrations.RunPython(_keep_git_dates, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="resourceversion",
            name="git_committed_at",
            field=models.DateTimeField(),
        ),
        migrations.AddField(
            model_name="indexcursor",
            name="schema_version",
            field=models.CharField(default="1", max_length=8),
        ),
    ]
