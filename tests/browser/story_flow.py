"""An editor curates story watch in the news admin: opens a story, moves one of its articles
to another story, merges two stories, and the next `ingest` keeps it all (read back through
the public /api/v1 story pages)."""

from pathlib import Path
from urllib.parse import urlsplit

import httpx

from tests.browser.conftest import api_json, wait_for


def _stories(base: str) -> list[dict]:
    return api_json(f"{base}/api/v1/stories")["data"]


def _members(base: str, story_id: int) -> set[int] | None:
    answer = httpx.get(f"{base}/api/v1/stories/{story_id}", timeout=15)
    if answer.status_code == 404:
        return None
    return {entry["id"] for entry in answer.json()["data"]["entries"]}


def _choose_story(page, row: str, title: str) -> None:
    """Admin's autocomplete (select2): open it, type, take the story of that title."""
    page.click(f"{row} .field-move_to .select2-selection")
    page.fill(".select2-container--open .select2-search__field", title[:30])
    page.locator(".select2-results__option", has_text=title[:30]).first.click()


def curate_stories(page, base: str, run_ingest, shots: Path) -> None:
    stories = wait_for(
        lambda: [s for s in _stories(base) if s["entries_count"] >= 1][:3] or None,
        seconds=120,
        what="three stories from the demo's ingest",
    )
    assert len(stories) == 3, stories
    source, target, other = stories

    page.goto(f"{base}/admin/news/story/{source['id']}/change/")
    page.wait_for_selector("#entries-group")
    # The articles part of the page: what the editor works on (the form above is the usual).
    page.locator("#entries-group").screenshot(path=str(shots / "editors-story-page.png"))
    moved = int(page.input_value("input[name='entries-0-id']"))
    _choose_story(page, "#entries-0", target["title"])
    page.click("input[name=_continue]")
    page.wait_for_load_state()
    assert page.locator(".messagelist .success").count(), page.inner_text("body")[:800]
    page.screenshot(path=str(shots / "editors-story-moved.png"), full_page=False)
    assert moved in (_members(base, target["id"]) or set())

    # Merge the target with a third story from the list's action.
    page.goto(f"{base}/admin/news/story/")
    for story in (target, other):
        page.check(f"input[name=_selected_action][value='{story['id']}']")
    page.select_option("select[name=action]", "merge")
    page.click("button[name=index]")
    page.wait_for_load_state()
    assert urlsplit(page.url).path == "/admin/news/story/"
    assert "slogs ihop" in page.locator(".messagelist").inner_text()
    page.screenshot(path=str(shots / "editors-stories-merged.png"), full_page=False)

    def merged() -> list[dict] | None:
        kept = [s for s in (target, other) if _members(base, s["id"]) is not None]
        return kept if len(kept) == 1 else None

    # Public copies live up to NEWS_RESPONSE_CACHE_SECONDS (10 s) in each worker.
    kept = wait_for(merged, seconds=120, what="one of the two merged stories gone")
    assert isinstance(kept, list)
    merged_into = kept[0]["id"]
    expected = _members(base, merged_into)
    assert expected is not None and moved in expected

    # The next ingest (fetch, summaries, clustering) keeps every correction.
    ran = run_ingest()
    assert ran.returncode == 0, ran.stderr
    after = _members(base, merged_into)
    assert after is not None and expected <= after
    assert moved not in (_members(base, source["id"]) or set())
    gone = other["id"] if merged_into == target["id"] else target["id"]
    assert _members(base, gone) is None
