"""Fixtures of these tests."""

from tests.news.accounts.news_accounts_fixtures import make_account  # noqa: F401
