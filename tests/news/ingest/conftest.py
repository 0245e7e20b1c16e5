"""Fixtures of these tests: the application in-process (tests/news/inprocess.py)."""

from tests.news.inprocess import http, served_queries  # noqa: F401
