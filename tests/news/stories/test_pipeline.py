"""Clustering as a pipeline step: the `cluster_stories` command, `ingest` (through load_demo),
and the quality of the result on the labelled demo set."""

import io

import pytest
from django.core.management import call_command

from benchmarks.cluster_quality import continuations_load, labels_load, quality_measure
from news_site.ingest.demo import demo_load
from news_site.news.models import Entry, Story

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]


def test_cluster_stories_command_assigns_entries_and_reports(make_feed, make_entry):
    entry = make_entry(make_feed(), title="Apple släpper iOS 26.2", summary_original="iOS 26.2.")
    out = io.StringIO()

    call_command("cluster_stories", stdout=out, stderr=io.StringIO())

    entry.refresh_from_db()
    assert entry.story is not None
    assert "1 entries assigned, 1 new" in out.getvalue()


def test_the_demo_is_clustered_by_ingest_with_f1_of_at_least_0_9():
    demo_load()

    quality = quality_measure(labels=labels_load(), continuations=continuations_load())

    assert quality.entries == Entry.objects.count()
    assert quality.pairwise_f1 >= 0.9 and quality.bcubed_f1 >= 0.9
    assert quality.links_expected <= quality.links_found
    assert Story.objects.filter(source_count=3, entries_count=3).exists()
    assert not Entry.objects.filter(platform_relevant=True, story__isnull=True).exists()
