"""Editors correct story watch on the story's admin page (move, take out, split, merge), and
the next clustering run keeps every correction; the public API shows it at the next request."""

from datetime import timedelta

import pytest
from django.core.cache import cache
from django.utils import timezone

from news_site.news.models import Entry, Story
from news_site.stories.clustering import stories_cluster
from tests.news.stories.test_clustering import A20_CHIP, FACE_ID_EN, FACE_ID_EN_2, FACE_ID_SV

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]

FACE_ID_LATER = (
    "Under-display Face ID for iPhone 18 Pro confirmed by second supplier",
    "A second supplier report says the iPhone 18 Pro will put Face ID under the display, "
    "shrinking the Dynamic Island to a camera cutout.",
)
A20_LATER = (
    "A20 Pro chip for iPhone 18 Pro enters TSMC 2nm production",
    "TSMC has started making the A20 Pro chip for the iPhone 18 Pro on its 2nm process, "
    "analyst Jeff Pu says.",
)


@pytest.fixture(autouse=True)
def _no_cluster_lock():
    cache.clear()


@pytest.fixture
def article(make_feed, make_entry):
    now = timezone.now()

    def make(text, *, hours_ago=3.0, language="en"):
        title, summary = text
        return make_entry(
            make_feed(language=language),
            title=title,
            summary_original=summary,
            summary_translated=summary if language == "sv" else "",
            language=language,
            published_at=now - timedelta(hours=hours_ago),
        )

    return make


@pytest.fixture
def two_stories(article):
    """Face ID (three sources) and A20 (one source), as clustering made them."""
    face = [article(FACE_ID_EN, hours_ago=5), article(FACE_ID_EN_2, hours_ago=4)]
    face.append(article(FACE_ID_SV, hours_ago=3, language="sv"))
    chip = article(A20_CHIP, hours_ago=2)
    stories_cluster()
    for entry in [*face, chip]:
        entry.refresh_from_db()
    assert len({entry.story_id for entry in face}) == 1
    assert chip.story_id not in {None, face[0].story_id}
    return face, chip


def _story_page(editor_client, story: Story, choices: dict[int, dict[str, str]]) -> object:
    """POST the story's change form as the browser would, with `choices` per member id."""
    members = list(story.entries.order_by("-listed_at", "-id"))
    data = {
        "title": story.title,
        "slug": story.slug,
        "lead": story.lead,
        "body": story.body,
        "predecessor": story.predecessor_id or "",
        "entries-TOTAL_FORMS": str(len(members)),
        "entries-INITIAL_FORMS": str(len(members)),
        "entries-MIN_NUM_FORMS": "0",
        "entries-MAX_NUM_FORMS": "0",
    }
    for index, entry in enumerate(members):
        data[f"entries-{index}-id"] = str(entry.pk)
        data[f"entries-{index}-story"] = str(story.pk)
        for name, value in choices.get(entry.pk, {}).items():
            data[f"entries-{index}-{name}"] = value
    return editor_client.post(f"/admin/news/story/{story.pk}/change/", data)


def _api_members(client, story_id: int) -> list[int]:
    response = client.get(f"/api/v1/stories/{story_id}")
    assert response.status_code == 200, response.content
    return [entry["id"] for entry in response.json()["data"]["entries"]]


def test_story_page_lists_members_newest_first_and_hides_internals(editor_client, two_stories):
    face, _chip = two_stories
    page = editor_client.get(f"/admin/news/story/{face[0].story_id}/change/").content.decode()
    positions = [page.index(entry.title) for entry in reversed(face)]
    assert positions == sorted(positions), "members newest first"
    for entry in face:
        assert entry.feed.title in page
    for internal in ("centroid", "text_fingerprint", 'name="entities"', 'name="entries_count"'):
        assert internal not in page
    listing = editor_client.get("/admin/news/story/").content.decode()
    assert 'class="field-entries_count">3<' in listing
    assert 'class="field-source_count">3<' in listing


def test_moved_article_stays_moved_after_clustering_and_shows_at_once(
    editor_client, client, two_stories, article
):
    face, chip = two_stories
    face_story, chip_story = face[0].story, chip.story
    moved = face[2]
    assert moved.pk not in _api_members(client, chip_story.pk)  # cached under this generation

    response = _story_page(editor_client, face_story, {moved.pk: {"move_to": str(chip_story.pk)}})
    assert response.status_code == 302, response.content.decode()[-3000:]
    assert moved.pk in _api_members(client, chip_story.pk)
    assert moved.pk not in _api_members(client, face_story.pk)

    article(FACE_ID_LATER, hours_ago=1)
    stories_cluster()
    moved.refresh_from_db()
    assert moved.story_id == chip_story.pk and moved.story_pinned
    face_story.refresh_from_db()
    chip_story.refresh_from_db()
    assert (face_story.entries_count, chip_story.entries_count) == (3, 2)


def test_article_taken_out_is_not_put_back(editor_client, two_stories, article):
    face, _chip = two_stories
    taken = face[1]
    response = _story_page(editor_client, face[0].story, {taken.pk: {"curation": "remove"}})
    assert response.status_code == 302
    article(FACE_ID_LATER, hours_ago=1)
    stories_cluster()
    taken.refresh_from_db()
    assert taken.story_id is None and taken.story_pinned


def test_split_story_is_never_joined_again(editor_client, two_stories, article):
    face, _chip = two_stories
    original = face[0].story
    response = _story_page(
        editor_client,
        original,
        {face[2].pk: {"curation": "split"}, face[1].pk: {"curation": "split"}},
    )
    assert response.status_code == 302
    face[1].refresh_from_db()
    split = face[1].story
    assert split.pk != original.pk and split.entries_count == 2
    # The new story's title comes from its own articles, the old one's counts from what is left.
    assert split.title in {face[1].title, face[2].title}
    original.refresh_from_db()
    assert original.entries_count == 1

    later = article(FACE_ID_LATER, hours_ago=1)
    stories_cluster()
    later.refresh_from_db()
    assert later.story_id in {original.pk, split.pk}
    assert Entry.objects.get(pk=face[0].pk).story_id == original.pk
    assert set(
        Entry.objects.filter(pk__in=[face[1].pk, face[2].pk]).values_list("story", flat=True)
    ) == {split.pk}


def test_merged_story_is_gone_for_good(editor_client, client, two_stories, article):
    face, chip = two_stories
    face_story, chip_story = face[0].story, chip.story
    response = editor_client.post(
        "/admin/news/story/",
        {"action": "merge", "_selected_action": [face_story.pk, chip_story.pk]},
    )
    assert response.status_code == 302
    assert not Story.objects.filter(pk=chip_story.pk).exists()
    assert client.get(f"/api/v1/stories/{chip_story.pk}").status_code == 404
    assert chip.pk in _api_members(client, face_story.pk)

    later = article(A20_LATER, hours_ago=1)
    stories_cluster()
    chip.refresh_from_db()
    assert chip.story_id == face_story.pk
    assert not Story.objects.filter(pk=chip_story.pk).exists()
    later.refresh_from_db()
    assert later.story_id is not None


def test_merge_of_one_story_is_refused(editor_client, two_stories):
    face, _chip = two_stories
    response = editor_client.post(
        "/admin/news/story/",
        {"action": "merge", "_selected_action": [face[0].story_id]},
        follow=True,
    )
    assert "Välj minst två nyhetstrådar" in response.content.decode()
    assert Story.objects.count() == 2
