"""Security headers of both services, on gunicorn as deployed (news: uvicorn workers, compliance:
sync workers) with production settings: HTTPS enforced, nginx's `X-Forwarded-Proto` trusted.

The requests here touch no database (each service gets an empty SQLite file, so a query would
fail loudly): the point is the headers every response carries."""

import re
from collections.abc import Iterator

import httpx
import pytest

from tests.conftest import Gunicorn

BEHIND_TLS = {"X-Forwarded-Proto": "https"}
# Paths that answer without a database: an API error envelope and the admin's login form.
PATHS = {
    "news": ["/api/v1/no-such-endpoint", "/admin/login/"],
    "compliance": ["/api/v1/compliance/no-such-endpoint", "/admin/login/"],
}


@pytest.fixture(scope="module")
def services(tmp_path_factory) -> Iterator[dict[str, Gunicorn]]:
    var = tmp_path_factory.mktemp("security-headers")
    env = {
        "DEBUG": "false",
        "SECRET_KEY": "a-long-random-production-secret-" + "x" * 40,
        "SECURE_SSL_REDIRECT": "true",
        "ALLOWED_HOSTS": "127.0.0.1",
        "NEWS_DATABASE_URL": f"sqlite:///{var}/news.sqlite3",
        "COMPLIANCE_DATABASE_URL": f"sqlite:///{var}/compliance.sqlite3",
    }
    servers = {
        "news": Gunicorn(
            "news_site.asgi:application",
            {**env, "DJANGO_SETTINGS_MODULE": "news_site.settings"},
            workers=1,
            worker_class="uvicorn_worker.UvicornWorker",
        ),
        "compliance": Gunicorn(
            "compliance_site.wsgi",
            {**env, "DJANGO_SETTINGS_MODULE": "compliance_site.settings"},
            workers=1,
        ),
    }
    try:
        for server in servers.values():
            server.wait_ready("/healthz")
        yield servers
    finally:
        for server in servers.values():
            server.stop()


def policy(response: httpx.Response) -> dict[str, list[str]]:
    """The Content-Security-Policy header as {directive: sources}."""
    parts = (part.split() for part in response.headers["Content-Security-Policy"].split(";"))
    return {part[0]: part[1:] for part in parts if part}


CASES = [(service, path) for service, paths in PATHS.items() for path in paths]


@pytest.mark.parametrize(("service", "path"), CASES)
def test_plain_http_is_redirected_to_https(services, service, path):
    server = services[service]

    response = httpx.get(server.url + path)

    assert response.status_code == 301
    assert response.headers["Location"] == f"https://127.0.0.1:{server.port}{path}"


@pytest.mark.parametrize(("service", "path"), CASES)
def test_behind_tls_responses_carry_hsts_and_nosniff(services, service, path):
    response = httpx.get(services[service].url + path, headers=BEHIND_TLS)

    assert response.status_code in {200, 404}
    assert response.headers["Strict-Transport-Security"] == (
        "max-age=31536000; includeSubDomains; preload"
    )
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["X-Frame-Options"] == "DENY"
    assert response.headers["Referrer-Policy"] == "same-origin"


@pytest.mark.parametrize("service", ["news", "compliance"])
def test_api_responses_may_load_nothing_and_not_be_framed(services, service):
    response = httpx.get(services[service].url + PATHS[service][0], headers=BEHIND_TLS)

    assert response.headers["Content-Type"].startswith("application/json")
    directives = policy(response)
    assert directives["default-src"] == ["'none'"]
    assert directives["frame-ancestors"] == ["'none'"]
    assert directives["base-uri"] == ["'none'"]
    assert directives["form-action"] == ["'none'"]
    assert "script-src" not in directives


@pytest.mark.parametrize("service", ["news", "compliance"])
def test_the_admin_policy_admits_exactly_what_the_admin_loads(services, service):
    response = httpx.get(services[service].url + "/admin/login/", headers=BEHIND_TLS)

    assert response.status_code == 200
    assert policy(response) == {
        "default-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
    html = response.text
    # Everything the page loads is a same-origin /static/ file, which 'self' admits ...
    assets = re.findall(r'<(?:script|link)\b[^>]*?(?:src|href)="([^"]+)"', html)
    assert any(asset.endswith(".css") for asset in assets)
    assert all(asset.startswith("/static/") for asset in assets), assets
    # ... and nothing inline, which it would block.
    assert not re.search(r"<script\b(?![^>]*\bsrc=)", html)
    assert "<style" not in html
    assert not re.search(r"\sstyle=", html)
    assert not re.search(r"\son[a-z]+=", html)
    # The form posts to its own origin, which form-action 'self' admits.
    assert re.search(r'<form [^>]*action="/admin/login/', html)
