"""Fixtures of these tests."""

from tests.news.accounts.news_accounts_fixtures import make_account  # noqa: F401
from tests.smtpsink import smtp_sink  # noqa: F401
