"""The quick start's data: the bundled sample repository, reindexed, plus a demo API key."""

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand

from compliance_site.access.keys import api_key_create
from compliance_site.access.models import ApiKey
from compliance_site.monitoring.models import FlagOrigin, ReviewFlag
from compliance_site.monitoring.services import flag_raise
from compliance_site.records.demo import build_demo_repository

DEMO_KEY_NAME = "demo (quick start)"


class Command(BaseCommand):
    help = "Build the illustrative sample data repository, reindex it and issue a demo key."

    def handle(self, *args, **options):
        repo_path = settings.COMPLIANCE_DATA_REPO
        head = build_demo_repository(repo_path)
        self.stdout.write(f"sample data repository at {repo_path} (head {head[:12]})")
        call_command("reindex", repo=str(repo_path), verbosity=options["verbosity"])
        if not ReviewFlag.objects.filter(cleared_at__isnull=True).exists():
            flag_raise(
                state_abbreviation="OH",
                reason="Illustrative demo flag: the notice form page was redesigned.",
                origin=FlagOrigin.EDITOR,
                created_by="demo",
            )
        # Keys are stored hashed, so the quick start issues a fresh one on every load.
        ApiKey.objects.filter(name=DEMO_KEY_NAME).delete()
        _key, raw_key = api_key_create(name=DEMO_KEY_NAME)
        self.stdout.write("demo API key (send as 'Authorization: Bearer <key>'):")
        self.stdout.write(raw_key)
