"""A source's stored fetch error is shown to editors with a sentence in their language saying
what went wrong, the stored text beside it."""

import typing

import pytest
from django.utils import translation
from hypothesis import given
from hypothesis import strategies as st

from news_site.news.fetch_problems import EXPLANATIONS, fetch_problem_shown
from shared.fetch_errors import FetchErrorCode


def test_every_fetch_error_code_has_an_explanation():
    for code in typing.get_args(FetchErrorCode):
        with translation.override("sv"):
            shown = fetch_problem_shown(f"{code}: detail")
        assert shown.endswith(f" ({code}: detail)"), code
        assert shown != f"{code}: detail"


def test_a_blocked_address_says_which_setting_allows_it_in_swedish():
    with translation.override("sv"):
        shown = fetch_problem_shown("blocked_address: 192.168.1.5 is a private address")

    assert shown.startswith("Adressen leder till ett lokalt eller privat nät")
    assert "FETCH_ALLOW_PRIVATE_NETWORKS" in shown
    assert shown.endswith("(blocked_address: 192.168.1.5 is a private address)")


@given(st.text(max_size=200).filter(lambda text: not text.startswith(tuple(EXPLANATIONS))))
def test_a_text_it_does_not_know_is_shown_as_stored(error):
    assert fetch_problem_shown(error) == error


@pytest.mark.django_db
def test_the_source_page_and_the_health_page_explain_the_error(editor_client, make_feed):
    feed = make_feed(title="Lokal", last_error="HTTP 503", error_count=2)

    for path in (f"/admin/news/feed/{feed.pk}/change/", "/admin/news/feed/health/"):
        page = editor_client.get(path).content.decode()
        assert "Källan svarade med ett fel. (HTTP 503)" in page, path
