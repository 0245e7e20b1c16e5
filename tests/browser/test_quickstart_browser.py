"""The quick start (`make run`) as its users meet it: an editor in news admin, a compliance
admin making an API key and using it, a mobile developer reading a login code, the API
references rendering, operator commands reading .env."""

import re
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from tests.browser.conftest import QuickStart
from tests.browser.editor_flow import admin_login, assert_admin_has_css, editor_session
from tests.browser.story_flow import curate_stories

# The quick start is the embedded default (SQLite, in-process caches) by definition.
pytestmark = pytest.mark.embedded_only

SHOTS = Path(__file__).resolve().parents[2] / "var" / "screenshots"


def test_the_banner_tells_a_new_user_what_to_do(quickstart: QuickStart) -> None:
    banner = quickstart.output()
    password = quickstart.setting("DEMO_ADMIN_PASSWORD")
    key = quickstart.setting("COMPLIANCE_DEMO_API_KEY")
    assert len(password) >= 12 and key.startswith("cdk_")
    assert f"password {password}" in banner
    assert f"Bearer {key}" in banner
    assert f"{quickstart.news}/admin/" in banner
    assert f"{quickstart.news}/api/v1/docs" in banner
    assert f"{quickstart.var_dir}/mail" in banner


def test_an_editor_adds_a_feed_and_edits_what_the_worker_fetched(
    quickstart: QuickStart, page, local_server
) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    editor_session(
        page,
        quickstart.news,
        quickstart.setting("DEMO_ADMIN_USERNAME"),
        quickstart.setting("DEMO_ADMIN_PASSWORD"),
        local_server,
        screenshot=SHOTS / "quickstart-news-admin-entry.png",
    )
    # The admin speaks Swedish and gives times with their zone.
    page.goto(f"{quickstart.news}/admin/news/feed/")
    assert page.locator("html").get_attribute("lang") == "sv"
    assert re.search(r"\d{2}:\d{2} (CET|CEST)", page.content())


def test_an_editor_moves_an_article_and_merges_stories_and_ingest_keeps_it(
    quickstart: QuickStart, page
) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    admin_login(
        page,
        quickstart.news,
        quickstart.setting("DEMO_ADMIN_USERNAME"),
        quickstart.setting("DEMO_ADMIN_PASSWORD"),
    )
    curate_stories(page, quickstart.news, lambda: quickstart.python("news_site", "ingest"), SHOTS)


def test_a_compliance_admin_creates_a_key_and_uses_it(quickstart: QuickStart, page) -> None:
    admin_login(
        page,
        quickstart.compliance,
        quickstart.setting("DEMO_ADMIN_USERNAME"),
        quickstart.setting("DEMO_ADMIN_PASSWORD"),
    )
    assert_admin_has_css(page)
    page.goto(f"{quickstart.compliance}/admin/access/apikey/add/")
    page.fill("#id_name", "browser test integration")
    page.fill("#id_rate_limit_per_minute", "120")
    page.click("input[name=_save]")
    # Shown once, on its own page (never through the cookie-backed messages).
    key = page.locator("#new-api-key").inner_text().strip()
    assert key.startswith("cdk_")
    answer = httpx.get(
        f"{quickstart.compliance}/api/v1/compliance/states/TX",
        headers={"Authorization": f"Bearer {key}"},
        timeout=15,
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()["data"]["abbreviation"] == "TX"
    assert answer.headers["X-RateLimit-Limit"] == "120"
    page.screenshot(path=str(SHOTS / "quickstart-compliance-admin.png"))


def test_an_editor_works_in_both_admins_in_two_tabs_at_once(quickstart: QuickStart, page) -> None:
    """Browsers keep cookies per host, not per port: with one cookie name for both services,
    logging into the compliance admin replaced the news session and CSRF token, and the news
    form left open failed with a CSRF page."""
    username = quickstart.setting("DEMO_ADMIN_USERNAME")
    password = quickstart.setting("DEMO_ADMIN_PASSWORD")
    news_tab = page
    admin_login(news_tab, quickstart.news, username, password)
    news_tab.goto(f"{quickstart.news}/admin/news/tag/add/")
    compliance_tab = news_tab.context.new_page()
    admin_login(compliance_tab, quickstart.compliance, username, password)
    compliance_tab.goto(f"{quickstart.compliance}/admin/access/apikey/add/")
    compliance_tab.fill("#id_name", "two tabs")
    with compliance_tab.expect_response(lambda r: r.request.method == "POST") as saved:
        compliance_tab.click("input[name=_save]")
    assert saved.value.status < 400, saved.value.status
    # The news form was opened before the compliance login; it still saves.
    news_tab.fill("#id_name", "Två flikar")
    news_tab.fill("#id_slug", "tva-flikar")
    news_tab.click("input[name=_save]")
    news_tab.wait_for_load_state()
    assert urlsplit(news_tab.url).path == "/admin/news/tag/", news_tab.inner_text("body")[:500]
    assert news_tab.get_by_text("Två flikar").count()
    # And the compliance session is still there too.
    compliance_tab.goto(f"{quickstart.compliance}/admin/")
    assert urlsplit(compliance_tab.url).path == "/admin/"


def test_a_mobile_developer_reads_the_login_code_locally(quickstart: QuickStart) -> None:
    email = "dev@example.com"
    login = f"{quickstart.news}/api/v1/auth/login"
    sent = httpx.post(login, json={"provider": "email", "email": email}, timeout=15)
    assert sent.status_code == 202, sent.text
    mails = sorted((quickstart.var_dir / "mail").glob("*"), key=lambda p: p.stat().st_mtime)
    assert mails, "no mail file written"
    text = mails[-1].read_text(encoding="utf-8")
    assert f"To: {email}" in text
    code = re.search(r"\b(\d{6})\b", text.split("\n\n", 1)[1])[1]
    token = httpx.post(login, json={"provider": "email", "email": email, "code": code}, timeout=15)
    assert token.status_code == 200, token.text
    bearer = {"Authorization": f"Bearer {token.json()['data']['token']}"}
    follows = httpx.get(f"{quickstart.news}/api/v1/entries/follows", headers=bearer, timeout=15)
    assert follows.status_code == 200
    # The Android emulator's address for the host is served; another host gets the v1 shape.
    emulator = httpx.get(
        f"{quickstart.news}/api/v1/feeds", headers={"Host": "10.0.2.2"}, timeout=15
    )
    assert emulator.status_code == 200
    rejected = httpx.get(
        f"{quickstart.news}/api/v1/feeds?x=1", headers={"Host": "evil.example"}, timeout=15
    )
    assert rejected.status_code == 400
    assert rejected.json()["error"]["type"] == "invalid_request"


def _watch(page, base: str) -> tuple[list[str], list[str]]:
    """Requests to anywhere but the service, and console errors (CSP violations among them)."""
    foreign: list[str] = []
    problems: list[str] = []
    page.on("request", lambda r: None if r.url.startswith(base) else foreign.append(r.url))
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    return foreign, problems


def test_the_api_references_render_from_the_services_own_assets(
    quickstart: QuickStart, browser
) -> None:
    for base, path in (
        (quickstart.news, "/api/v1/docs"),
        (quickstart.compliance, "/api/v1/compliance/docs"),
    ):
        context = browser.new_context()
        page = context.new_page()
        foreign, problems = _watch(page, base)
        page.goto(f"{base}{path}")
        page.wait_for_selector(".swagger-ui .opblock", timeout=30_000)
        assert page.locator(".swagger-ui .opblock").count() > 5
        # No CDN, and nothing the page's Content-Security-Policy had to block.
        assert not foreign, foreign
        assert not problems, problems
        page.screenshot(path=str(SHOTS / f"api-reference-{path.split('/')[-2]}.png"))
        context.close()


def test_operator_commands_read_the_env_file(quickstart: QuickStart, tmp_path: Path) -> None:
    made = quickstart.python("compliance_site", "create_api_key", "--name", "from the shell")
    assert made.returncode == 0, made.stderr
    assert made.stdout.strip().splitlines()[-1].startswith("cdk_")
    token = quickstart.python("news_site", "create_token", "ops@example.com")
    assert token.returncode == 0, token.stderr
    # Without .env and SECRET_KEY: one clear line, no traceback.
    empty = tmp_path / "empty.env"
    empty.write_text("")
    quickstart.env_file, original = empty, quickstart.env_file
    try:
        failed = quickstart.python("news_site", "check")
    finally:
        quickstart.env_file = original
    assert failed.returncode != 0
    assert "SECRET_KEY is not set" in failed.stderr
    assert "Traceback" not in failed.stderr
    assert len(failed.stderr.strip().splitlines()) == 1
