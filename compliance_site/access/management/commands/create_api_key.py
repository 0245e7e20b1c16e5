"""Issue an API key. The raw key is printed once, on the last line; only its hash is kept."""

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from compliance_site.access.keys import api_key_create


class Command(BaseCommand):
    help = "Create an API key and print it once (last line of stdout)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--name", required=True)
        parser.add_argument("--rate-limit-per-minute", type=int, default=None)

    def handle(self, *args: Any, **options: Any) -> None:
        rate = options["rate_limit_per_minute"]
        if rate is not None and rate < 1:
            raise CommandError("--rate-limit-per-minute must be at least 1")
        key, raw_key = api_key_create(name=options["name"], rate_limit_per_minute=rate)
        if options["verbosity"] >= 1:
            self.stdout.write(
                f"Created API key '{key.name}' ({key.prefix}), "
                f"{key.rate_limit_per_minute} requests/minute. It is shown only once:"
            )
        self.stdout.write(raw_key)
