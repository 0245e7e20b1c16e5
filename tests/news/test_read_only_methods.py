"""The read-only surfaces (legacy JSON, RSS, markdown, llms.txt, the pages for people) answer an
unsafe method with 405 and `Allow`, as HTTP says, not with the CSRF check's 403 HTML page."""

import pytest

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]


@pytest.fixture
def paths(make_feed, make_entry) -> list[str]:
    feed = make_feed()
    entry = make_entry(feed)
    return [
        "/",
        "/entries.json",
        "/entries/popular.json",
        f"/entries/{entry.pk}.json",
        "/feeds.json",
        f"/feeds/{feed.pk}.json",
        "/tags.json",
        "/entries.rss",
        "/index.md",
        "/llms.txt",
        f"/entries/{entry.pk}",
        f"/entries/{entry.pk}.md",
    ]


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE"])
def test_unsafe_methods_answer_405_with_allow(http, paths, method):
    for path in paths:
        answer = http.request(method, path, content=b"x=1")
        assert answer.status_code == 405, (method, path, answer.status_code)
        assert answer.headers["Allow"] == "GET, HEAD", path


def test_the_surfaces_still_answer_get_and_head(http, paths):
    for path in paths:
        assert http.get(path).status_code == 200, path
        assert http.head(path).status_code == 200, path
