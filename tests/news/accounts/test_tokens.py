"""Bearer tokens: header only, logout, account deletion, and the create_token command."""

import io

import pytest
from django.core.management import call_command

from news_site.accounts.models import Account, ApiToken, Follow, Identity
from tests.support.news_factories import FollowFactory

pytestmark = pytest.mark.django_db


def test_a_token_in_the_query_string_is_refused_with_400(http, make_account):
    _account, auth = make_account()
    raw = auth["Authorization"].removeprefix("Bearer ")

    response = http.get("/api/v1/entries/follows", params={"token": raw})
    public = http.get("/api/v1/entries", params={"token": raw})

    assert response.status_code == 400
    assert response.json()["error"]["type"] == "token_in_query"
    assert "Authorization: Bearer" in response.json()["error"]["message"]
    assert public.status_code == 400


@pytest.mark.parametrize(
    "header", ["Bearer nws_not-a-real-token", "Token abc", "Bearer", "Basic dXNlcjpwYXNz"]
)
def test_a_bad_token_is_401_even_on_public_endpoints(http, header):
    response = http.get("/api/v1/entries", headers={"Authorization": header})

    assert response.status_code == 401
    assert response.json()["error"]["type"] == "invalid_token"
    assert response.headers["WWW-Authenticate"].startswith("Bearer")


def test_logout_invalidates_only_the_current_token(http, make_account):
    account, phone = make_account()
    _same, tablet = make_account()

    response = http.post("/api/v1/auth/logout", headers=phone)

    assert response.status_code == 204
    after = http.get("/api/v1/entries/follows", headers=phone)
    assert after.status_code == 401
    assert after.json()["error"]["type"] == "invalid_token"
    assert http.get("/api/v1/entries/follows", headers=tablet).status_code == 200
    assert ApiToken.objects.filter(account=account).count() == 1


def test_an_expired_token_is_refused(http, make_account):
    from datetime import timedelta

    from django.utils import timezone

    account, auth = make_account()
    ApiToken.objects.filter(account=account).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )

    assert http.get("/api/v1/entries/follows", headers=auth).status_code == 401


def test_deleting_the_account_removes_it_with_tokens_follows_and_identities(
    http, make_account, make_feed
):
    account, auth = make_account()
    FollowFactory(account=account, feed=make_feed())

    response = http.delete("/api/v1/auth/account", headers=auth)

    assert response.status_code == 204
    assert not Account.objects.exists()
    assert not ApiToken.objects.exists()
    assert not Follow.objects.exists()
    assert not Identity.objects.exists()
    assert http.get("/api/v1/entries/follows", headers=auth).status_code == 401
    assert http.delete("/api/v1/auth/account", headers=auth).status_code == 401


def test_logout_and_deletion_need_a_token(http):
    for method, path in (("POST", "/api/v1/auth/logout"), ("DELETE", "/api/v1/auth/account")):
        response = http.request(method, path)
        assert response.status_code == 401
        assert response.headers["WWW-Authenticate"].startswith("Bearer")


def test_create_token_prints_a_working_token_on_the_last_line(http):
    out = io.StringIO()

    call_command("create_token", "Operator@Example.se", stdout=out)

    token = out.getvalue().strip().splitlines()[-1]
    response = http.get("/api/v1/entries/follows", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200
    assert Account.objects.get().email == "operator@example.se"


def test_create_token_refuses_a_non_address():
    from django.core.management.base import CommandError

    with pytest.raises(CommandError):
        call_command("create_token", "nobody")


def test_a_token_deleted_outside_the_api_is_refused_at_once(http, make_account):
    """An operator revoking a stolen token from the shell: this process already holds a copy
    of it, which must not outlive the row."""
    account, auth = make_account()
    assert http.get("/api/v1/entries/follows", headers=auth).status_code == 200

    ApiToken.objects.filter(account=account).delete()

    assert http.get("/api/v1/entries/follows", headers=auth).status_code == 401


def test_a_token_expired_early_outside_the_api_is_refused_at_once(http, make_account):
    from datetime import timedelta

    from django.utils import timezone

    account, auth = make_account()
    assert http.get("/api/v1/entries/follows", headers=auth).status_code == 200

    token = ApiToken.objects.get(account=account)
    token.expires_at = timezone.now() - timedelta(seconds=1)
    token.save()

    assert http.get("/api/v1/entries/follows", headers=auth).status_code == 401


def test_a_follow_removed_outside_the_api_leaves_the_follows_at_once(
    http, make_account, make_feed, make_entry
):
    account, auth = make_account()
    kept, dropped = make_feed(), make_feed()
    make_entry(kept, title="Kvar")
    make_entry(dropped, title="Borta")
    FollowFactory(account=account, feed=kept)
    FollowFactory(account=account, feed=dropped)
    before = http.get("/api/v1/entries/follows", headers=auth).json()["data"]
    assert {entry["content"]["original"]["title"] for entry in before} == {"Kvar", "Borta"}

    Follow.objects.filter(feed=dropped).delete()

    after = http.get("/api/v1/entries/follows", headers=auth).json()["data"]
    assert [entry["content"]["original"]["title"] for entry in after] == ["Kvar"]
