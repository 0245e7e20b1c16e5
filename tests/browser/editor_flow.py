"""The editor's first session, shared by the quick start and the run-prod browser tests: log in
to news admin, add a feed served by a local server, see the running worker fetch it, edit a
summary, add a tag through the tag widget, and check the page has its CSS."""

import re
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit

from tests.browser.conftest import FETCH_SECONDS
from tests.support.localserver import LocalServer

FEED = """<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0"><channel>
<title>Testkällan</title><link>{base}/</link><language>sv</language>
<description>En källa för webbläsartestet.</description>
<item><title>Apple släpper iOS 26.2 med nya funktioner för iPhone</title>
<link>{base}/artikel/1</link><guid>{marker}-1</guid>
<pubDate>Mon, 23 Nov 2026 10:00:00 +0000</pubDate>
<description>Apple har släppt iOS 26.2 till iPhone. Uppdateringen innehåller nya funktioner
för Mac-användare och iPad, och rättar flera säkerhetsbrister.</description></item>
</channel></rss>
"""


def serve_feed(local_server: LocalServer) -> str:
    marker = uuid.uuid4().hex[:8]
    body = FEED.format(base=local_server.url("").rstrip("/"), marker=marker).encode()

    def feed(handler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "application/rss+xml; charset=utf-8")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    path = f"/feed-{marker}.xml"
    local_server.routes[path] = feed
    return local_server.url(path)


def serve_site(local_server: LocalServer) -> tuple[str, str]:
    """A site whose home page links its feed, as news sites do: (the page, the feed)."""
    feed_url = serve_feed(local_server)
    page = (
        "<!doctype html><html lang=sv><head><title>Testkällan</title>"
        f'<link rel="alternate" type="application/rss+xml" href="{feed_url}"></head>'
        "<body><h1>Testkällan</h1></body></html>"
    ).encode()
    path = f"/site-{feed_url.rsplit('-', 1)[1].split('.')[0]}/"

    def home(handler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/html; charset=utf-8")
        handler.send_header("Content-Length", str(len(page)))
        handler.end_headers()
        handler.wfile.write(page)

    local_server.routes[path] = home
    return local_server.url(path), feed_url


def admin_login(page, base: str, username: str, password: str) -> None:
    page.goto(f"{base}/admin/login/?next=/admin/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("input[type=submit]")
    page.wait_for_load_state()
    # Logged in means admin's index; a refused login (CSRF 403, wrong password) says why.
    path = urlsplit(page.url).path
    assert path == "/admin/", f"login ended on {page.url}: {page.inner_text('body')[:500]}"


def assert_admin_has_css(page) -> None:
    # Without its stylesheet the header would be transparent and the font the browser's serif.
    header = page.locator("#header")
    background = header.evaluate("e => getComputedStyle(e).backgroundColor")
    assert background not in ("rgba(0, 0, 0, 0)", "transparent"), background
    family = page.evaluate("() => getComputedStyle(document.body).fontFamily")
    assert family.strip().lower() != "serif", family


def editor_session(
    page,
    base: str,
    username: str,
    password: str,
    local_server: LocalServer,
    screenshot: Path | None = None,
    on_added=None,
) -> None:
    admin_login(page, base, username, password)
    assert_admin_has_css(page)

    # The editor pastes the site's address; the feed, its title and site are found from it.
    site_url, feed_url = serve_site(local_server)
    page.goto(f"{base}/admin/news/feed/add/")
    page.fill("#id_url", site_url)
    page.fill("#id_language", "sv")
    page.click("input[name=_save]")
    page.wait_for_url(re.compile(r"^[^?]*/admin/news/feed/$"))
    assert "Testkällan" in page.locator(".messagelist").inner_text()
    if on_added is not None:
        on_added()

    # The running worker fetches it: the entry appears in the entries list of admin.
    entries = f"{base}/admin/news/entry/?q={feed_url.rsplit('/', 1)[0]}"
    deadline = time.monotonic() + FETCH_SECONDS
    while True:
        page.goto(entries)
        rows = page.locator("#result_list tbody tr th a")
        if rows.count():
            break
        assert time.monotonic() < deadline, "the worker did not fetch the new feed"
        time.sleep(2)
    assert local_server.requests_to(feed_url.split(str(local_server.port), 1)[1])
    rows.first.click()
    page.wait_for_selector("#id_summary_translated")

    summary = "Redaktörens sammanfattning: iOS 26.2 är här."
    page.fill("#id_summary_translated", summary)
    # The tag widget: "+" opens admin's add-tag popup, whose save puts the tag into the field.
    tag = f"test-{uuid.uuid4().hex[:6]}"
    with page.expect_popup() as popup_info:
        page.click("#add_id_tags")
    popup = popup_info.value
    popup.wait_for_selector("#id_name")
    popup.fill("#id_name", tag)
    popup.fill("#id_slug", tag)
    # Listening before the click: the popup may close before a later wait would start.
    with popup.expect_event("close"):
        popup.click("input[name=_save]")
    assert page.locator("#id_tags option:checked", has_text=tag).count() == 1
    page.click("input[name=_continue]")
    page.wait_for_selector(".messagelist")

    assert page.input_value("#id_summary_translated") == summary
    assert page.locator("#id_tags option:checked", has_text=tag).count() == 1
    assert "Redigerad av redaktör" in page.content()
    if screenshot is not None:
        page.screenshot(path=str(screenshot), full_page=False)
