"""Fixtures of these tests. `http` is the application in-process (tests/news/inprocess.py), for
the probes and /metrics, which need no server of their own; the other tests start theirs."""

from tests.news.accounts.news_accounts_fixtures import make_account  # noqa: F401
from tests.news.inprocess import http, served_queries  # noqa: F401
from tests.smtpsink import smtp_sink  # noqa: F401
