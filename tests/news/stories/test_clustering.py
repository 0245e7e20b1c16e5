"""Clustering entries into stories, against the real database: same event across sources and
languages, different events about one product, the time window, dormant stories, links."""

from datetime import timedelta

import pytest
from django.core.cache import cache
from django.utils import timezone

from news_site.news.models import Entry, Story, StoryStatus
from news_site.stories.clustering import stories_cluster

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]

FACE_ID_EN = (
    "Report: iPhone 18 Pro will hide Face ID under the display",
    "A supply chain report says the iPhone 18 Pro will move Face ID under the display. "
    "The Dynamic Island would shrink to a camera cutout. Mass production starts in June.",
)
FACE_ID_EN_2 = (
    "iPhone 18 Pro Rumored to Feature Under-Display Face ID",
    "Apple's iPhone 18 Pro models will feature under-display Face ID, according to a supply "
    "chain analyst. The Dynamic Island would shrink to a small camera cutout.",
)
FACE_ID_SV = (
    "Rapport: Face ID flyttar in under skärmen i iPhone 18 Pro",
    "Enligt en rapport från leverantörsledet får iPhone 18 Pro Face ID under skärmen. "
    "Dynamic Island krymper till ett litet kamerahål. Massproduktionen startar i juni.",
)
# Same event, fewer shared words and entities: above the join, below the reopen threshold.
FACE_ID_SHORT_SV = (
    "Face ID hamnar under skärmen i iPhone 18 Pro",
    "Ny rapport: Face ID flyttar in under skärmen i nästa års iPhone 18 Pro.",
)
A20_CHIP = (
    "iPhone 18 Pro to use A20 Pro chip built on TSMC's 2nm process",
    "The A20 Pro chip in the iPhone 18 Pro will be made on TSMC's 2nm process, analyst Jeff "
    "Pu says. Smaller transistors should bring better performance and battery life.",
)


@pytest.fixture
def article(make_feed, make_entry):
    """An entry `hours_ago` old from a new source (or the given feed)."""
    now = timezone.now()

    def make(text, *, hours_ago=1.0, language="en", feed=None, image_url="", relevant=True):
        title, summary = text
        return make_entry(
            feed or make_feed(language=language),
            title=title,
            summary_original=summary,
            summary_translated=summary if language == "sv" else "",
            language=language,
            published_at=now - timedelta(hours=hours_ago),
            image_url=image_url,
            platform_relevant=relevant,
        )

    return make


def _story(entry: Entry) -> Story | None:
    entry.refresh_from_db()
    return entry.story


def test_the_same_event_from_three_sources_in_two_languages_is_one_story(article):
    first = article(FACE_ID_EN, hours_ago=5)
    second = article(FACE_ID_EN_2, hours_ago=3)
    swedish = article(FACE_ID_SV, hours_ago=2, language="sv")

    report = stories_cluster()

    story = _story(first)
    assert story is not None
    assert _story(second) == story and _story(swedish) == story
    assert report.stories_created == 1 and report.entries_assigned == 3
    assert story.entries_count == 3
    assert story.source_count == 3
    assert set(story.entries.values_list("source_count", flat=True)) == {3}
    assert story.first_entry_published_at == first.listed_at
    assert story.last_entry_published_at == swedish.listed_at
    assert story.updated_at == swedish.listed_at
    assert story.status == StoryStatus.ACTIVE
    assert "iphone 18 pro" in story.entities


def test_source_count_counts_sources_not_articles(article, make_feed):
    feed = make_feed()
    one = article(FACE_ID_EN, hours_ago=4, feed=feed)
    two = article(FACE_ID_EN_2, hours_ago=3, feed=feed)

    stories_cluster()

    story = _story(one)
    assert _story(two) == story
    assert story.entries_count == 2 and story.source_count == 1
    assert set(story.entries.values_list("source_count", flat=True)) == {1}


def test_different_events_about_the_same_product_stay_apart(article):
    face_id = article(FACE_ID_EN, hours_ago=3)
    chip = article(A20_CHIP, hours_ago=2)
    face_id_again = article(FACE_ID_SV, hours_ago=1, language="sv")

    stories_cluster()

    assert _story(face_id) != _story(chip)
    assert _story(face_id_again) == _story(face_id)
    assert Story.objects.count() == 2


def test_articles_without_a_shared_entity_never_join(article):
    iphone = article(("Apple announces a new colour", "The new colour comes to iPhone 17."))
    ipad = article(("Apple announces a new colour", "The new colour comes to iPad Air."))

    stories_cluster()

    assert _story(iphone) != _story(ipad)


def test_entries_outside_the_window_start_a_new_story_that_continues_the_old_one(article):
    old = article(FACE_ID_EN, hours_ago=100)
    new = article(FACE_ID_EN_2, hours_ago=1)

    report = stories_cluster()

    old_story, new_story = _story(old), _story(new)
    assert old_story != new_story
    assert new_story.predecessor == old_story
    assert list(old_story.successors.all()) == [new_story]
    assert old_story.status == StoryStatus.DORMANT
    assert new_story.status == StoryStatus.ACTIVE
    assert report.stories_linked == 1


def test_an_unrelated_later_story_gets_no_predecessor(article):
    article(FACE_ID_EN, hours_ago=100)
    chip = article(A20_CHIP, hours_ago=1)

    stories_cluster()

    assert _story(chip).predecessor is None


def test_a_dormant_story_is_not_reopened_by_a_loosely_related_article(article, settings):
    # 30 hours apart: within the window, but past a 24-hour quiet period.
    settings.NEWS_STORY_QUIET_HOURS = 24
    old = article(FACE_ID_EN, hours_ago=31)
    loosely_related = article(FACE_ID_SHORT_SV, hours_ago=1, language="sv")

    report = stories_cluster()

    assert _story(loosely_related) != _story(old)
    assert report.stories_reopened == 0


def test_a_dormant_story_reopens_for_a_close_match(article, settings):
    settings.NEWS_STORY_QUIET_HOURS = 24
    old = article(FACE_ID_EN, hours_ago=31)
    near_copy = article(FACE_ID_EN_2, hours_ago=1)

    report = stories_cluster()

    assert _story(near_copy) == _story(old)
    assert report.stories_reopened == 1
    assert _story(old).status == StoryStatus.ACTIVE


def test_the_loosely_related_article_joins_a_story_that_is_still_active(article, settings):
    # The same pair as above, now with a 48-hour quiet period: the lower threshold applies.
    settings.NEWS_STORY_QUIET_HOURS = 48
    old = article(FACE_ID_EN, hours_ago=31)
    swedish = article(FACE_ID_SHORT_SV, hours_ago=1, language="sv")

    stories_cluster()

    assert _story(swedish) == _story(old)


def test_stories_turn_dormant_after_the_quiet_period(article, settings):
    settings.NEWS_STORY_QUIET_HOURS = 48
    entry = article(FACE_ID_EN, hours_ago=10)
    stories_cluster()
    story = _story(entry)
    assert story.status == StoryStatus.ACTIVE

    stories_cluster(now=timezone.now() + timedelta(hours=39))
    story.refresh_from_db()
    assert story.status == StoryStatus.DORMANT


def test_a_late_member_reactivates_a_dormant_story(article, settings):
    settings.NEWS_STORY_QUIET_HOURS = 24
    old = article(FACE_ID_EN, hours_ago=40)
    stories_cluster()
    assert _story(old).status == StoryStatus.DORMANT

    article(FACE_ID_EN_2, hours_ago=1)
    stories_cluster()

    story = _story(old)
    assert story.entries_count == 2
    assert story.status == StoryStatus.ACTIVE


def test_the_story_image_comes_from_the_earliest_member_with_an_image(article):
    article(FACE_ID_EN, hours_ago=5)
    article(FACE_ID_EN_2, hours_ago=4, image_url="https://img.example/early.jpg")
    latest = article(
        FACE_ID_SV, hours_ago=1, language="sv", image_url="https://img.example/late.jpg"
    )

    stories_cluster()

    assert _story(latest).image_url == "https://img.example/early.jpg"


def test_irrelevant_entries_are_not_clustered(article):
    entry = article(FACE_ID_EN, relevant=False)

    stories_cluster()

    assert _story(entry) is None
    assert not Story.objects.exists()


def test_running_again_changes_nothing(article):
    entries = [article(FACE_ID_EN, hours_ago=3), article(FACE_ID_SV, hours_ago=2, language="sv")]
    article(A20_CHIP, hours_ago=1)
    stories_cluster()
    before = list(Story.objects.order_by("pk").values())

    report = stories_cluster()

    assert report.entries_assigned == 0 and report.stories_written == 0
    assert list(Story.objects.order_by("pk").values()) == before
    assert _story(entries[0]) == _story(entries[1])


def test_a_new_entry_joins_the_story_of_an_earlier_run(article):
    first = article(FACE_ID_EN, hours_ago=3)
    stories_cluster()

    second = article(FACE_ID_SV, hours_ago=1, language="sv")
    stories_cluster()

    story = _story(first)
    assert _story(second) == story
    assert story.entries_count == 2 and story.source_count == 2
    assert Entry.objects.get(pk=first.pk).source_count == 2


def test_a_run_is_skipped_while_another_holds_the_lock(article):
    entry = article(FACE_ID_EN)
    cache.add("stories:cluster-lock", "other-run", 60)
    try:
        report = stories_cluster()
    finally:
        cache.delete("stories:cluster-lock")

    assert report.skipped_locked
    assert _story(entry) is None
