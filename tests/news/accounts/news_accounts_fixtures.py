"""A fixture the /api/v1, accounts and search tests share: an account with a Bearer token."""

from collections.abc import Callable

import pytest

from news_site.accounts.models import Account, Provider
from news_site.accounts.services import account_for_identity, token_issue


def account_with_token(email: str = "anna@example.se") -> tuple[Account, dict[str, str]]:
    """An email account and the Authorization header of a fresh token for it."""
    account = account_for_identity(provider=Provider.EMAIL, subject=email, email=email)
    raw, _token = token_issue(account=account)
    return account, {"Authorization": f"Bearer {raw}"}


@pytest.fixture
def make_account() -> Callable[[str], tuple[Account, dict[str, str]]]:
    return account_with_token
