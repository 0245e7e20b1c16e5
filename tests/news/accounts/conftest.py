"""Fixtures of these tests: the application in-process (tests/news/inprocess.py)."""

from tests.news.accounts.news_accounts_fixtures import make_account  # noqa: F401
from tests.news.inprocess import http, served_queries  # noqa: F401
