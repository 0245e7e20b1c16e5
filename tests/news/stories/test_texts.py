"""Story title, lead and body: written by the configured model (a FakeModel on loopback), or
built offline from the members' summaries."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from news_site.news.models import Story
from news_site.news.summarise import ChatModel
from news_site.stories.clustering import stories_cluster

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]

ENGLISH = (
    "Report: iPhone 18 Pro will hide Face ID under the display",
    "A supply chain report says the iPhone 18 Pro will move Face ID under the display. "
    "The Dynamic Island would shrink to a camera cutout. Mass production starts in June.",
)
SWEDISH = (
    "Rapport: Face ID flyttar in under skärmen i iPhone 18 Pro",
    "Enligt en rapport från leverantörsledet får iPhone 18 Pro Face ID under skärmen. "
    "Dynamic Island krymper till ett litet kamerahål. Massproduktionen startar i juni.",
)
MODEL_STORY = {
    "title": "iPhone 18 Pro får Face ID under skärmen",
    "lead": "Flera källor rapporterar att Face ID flyttar in under skärmen.",
    "body": "MacSajten och Teknikbloggen skriver att Face ID hamnar under skärmen.",
}


@pytest.fixture
def two_sources(make_feed, make_entry):
    now = timezone.now()
    english = make_entry(
        make_feed(title="MacSajten", language="en"),
        title=ENGLISH[0],
        summary_original=ENGLISH[1],
        summary_translated="",
        language="en",
        published_at=now - timedelta(hours=3),
    )
    swedish = make_entry(
        make_feed(title="Teknikbloggen", language="sv"),
        title=SWEDISH[0],
        summary_original=SWEDISH[1],
        summary_translated=SWEDISH[1],
        language="sv",
        published_at=now - timedelta(hours=2),
    )
    return english, swedish


def _cluster_with_model():
    model = ChatModel.from_settings()
    try:
        return stories_cluster(model=model)
    finally:
        model.close()


@pytest.mark.usefixtures("two_sources")
def test_offline_text_is_built_from_the_member_summaries():
    report = stories_cluster()

    story = Story.objects.get()
    assert report.stories_written == 1 and report.stories_written_by_model == 0
    assert story.title == SWEDISH[0]
    assert story.lead == SWEDISH[1]
    assert story.body.splitlines() == [
        f"- MacSajten: {ENGLISH[1]}",
        f"- Teknikbloggen: {SWEDISH[1]}",
    ]
    assert story.slug == "rapport-face-id-flyttar-in-under-skarmen-i-iphone-18-pro"
    assert not story.written_by_model


def test_the_configured_model_writes_the_story(two_sources, fake_model):
    fake_model.queue(200, fake_model.completion(MODEL_STORY))

    report = _cluster_with_model()

    story = Story.objects.get()
    assert (story.title, story.lead, story.body) == tuple(MODEL_STORY.values())
    assert story.written_by_model
    assert report.stories_written_by_model == 1
    [request] = fake_model.requests
    prompt = request["messages"][1]["content"]
    assert ENGLISH[0] in prompt and SWEDISH[0] in prompt
    assert "Källa: MacSajten" in prompt and "Källa: Teknikbloggen" in prompt
    assert request["model"] == "test-model"


def test_a_story_of_one_article_costs_no_model_call(make_feed, make_entry, fake_model):
    entry = make_entry(make_feed(), title=SWEDISH[0], summary_translated=SWEDISH[1])

    _cluster_with_model()

    story = Story.objects.get()
    assert story.title == entry.title and story.lead == SWEDISH[1]
    assert fake_model.requests == []


def test_an_unusable_model_answer_falls_back_to_the_offline_text(two_sources, fake_model):
    fake_model.queue(200, fake_model.completion({"summary_sv": "Inte en story."}))

    _cluster_with_model()

    story = Story.objects.get()
    assert story.title == SWEDISH[0]
    assert not story.written_by_model


def test_an_offline_text_is_upgraded_once_a_model_is_configured(two_sources, fake_model):
    stories_cluster()
    assert not Story.objects.get().written_by_model
    fake_model.queue(200, fake_model.completion(MODEL_STORY))

    _cluster_with_model()
    _cluster_with_model()

    story = Story.objects.get()
    assert story.written_by_model and story.title == MODEL_STORY["title"]
    assert len(fake_model.requests) == 1


def test_the_text_is_rewritten_when_a_member_joins(two_sources, fake_model, make_feed, make_entry):
    fake_model.queue(200, fake_model.completion(MODEL_STORY))
    _cluster_with_model()
    make_entry(
        make_feed(title="Tredje källan", language="en"),
        title="iPhone 18 Pro Rumored to Feature Under-Display Face ID",
        summary_original="The iPhone 18 Pro will feature under-display Face ID, a supply chain "
        "report says. The Dynamic Island would shrink to a small camera cutout.",
        language="en",
        published_at=timezone.now() - timedelta(hours=1),
    )
    rewritten = {**MODEL_STORY, "title": "Tre källor: Face ID under skärmen"}
    fake_model.queue(200, fake_model.completion(json.dumps(rewritten)))

    _cluster_with_model()

    story = Story.objects.get()
    assert story.entries_count == 3
    assert story.title == rewritten["title"]
    assert "Källa: Tredje källan" in fake_model.requests[-1]["messages"][1]["content"]


def test_a_model_story_is_stored_as_plain_text_without_overrides_or_controls(
    two_sources, fake_model
):
    hostile = {
        "title": "iPhone\u202e 18 Pro &amp; Face ID\x00",
        "lead": "Flera k\u00e4llor\x1b[2J rapporterar \u2066n\u00e5got\u2069.",
        "body": "MacSajten\ufffe skriver &lt;b&gt;detta&lt;/b&gt;.\x85",
    }
    fake_model.queue(200, fake_model.completion(hostile))

    _cluster_with_model()

    story = Story.objects.get()
    assert story.written_by_model
    assert story.title == "iPhone 18 Pro & Face ID"
    assert story.lead == "Flera k\u00e4llor[2J rapporterar n\u00e5got."
    assert story.body == "MacSajten skriver <b>detta</b>."
