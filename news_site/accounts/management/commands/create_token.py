"""`python -m news_site create_token EMAIL`: a Bearer token for operators and tests."""

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.core.validators import validate_email

from news_site.accounts.models import Provider
from news_site.accounts.services import account_for_identity, email_normalize, token_issue


class Command(BaseCommand):
    help = "Issue a Bearer token for the account of EMAIL (created if new); printed last."

    def add_arguments(self, parser):
        parser.add_argument("email")

    def handle(self, *args, **options):
        email = email_normalize(options["email"])
        try:
            validate_email(email)
        except ValidationError as exc:
            raise CommandError(f"not an email address: {options['email']}") from exc
        account = account_for_identity(provider=Provider.EMAIL, subject=email, email=email)
        raw, token = token_issue(account=account)
        if options["verbosity"] > 1:
            self.stdout.write(f"account {account.pk}, token expires {token.expires_at:%Y-%m-%d}")
        self.stdout.write(raw)
