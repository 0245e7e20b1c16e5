"""The editors' day in the news admin of the quick start, in Chromium: bring 40 sources in from
an OPML file and take them out again, see a failing source on the health page and get one
notice mail, work through the review queue; and every admin page fits a 1280 px screen and
speaks Swedish. Each step leaves a screenshot in var/screenshots/ (editors-*.png, the pictures
of docs/editors.md: scripts/editors_screenshots.py copies them)."""

import email
import email.policy
import uuid
from collections.abc import Iterator
from email.message import EmailMessage
from pathlib import Path

import pytest
from lxml import etree

from tests.browser.admin_pages import admin_page_paths, english_words, overflow, visible_ui_text
from tests.browser.conftest import QuickStart, quickstart_running, wait_for
from tests.browser.editor_flow import FEED, admin_login, serve_site
from tests.support.localserver import LocalServer

pytestmark = pytest.mark.embedded_only

SHOTS = Path(__file__).resolve().parents[2] / "var" / "screenshots"
SCREEN_WIDTH = 1280


@pytest.fixture(scope="module")
def desk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[QuickStart]:
    """The quick start, with a source paused at its first failure instead of after three days
    of them, so that the pause and its notice happen while the test watches."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    with quickstart_running(
        tmp_path_factory.mktemp("editors-desk"), NEWS_FEED_PAUSE_AFTER_DAYS="0"
    ) as started:
        yield started


@pytest.fixture
def editor(desk: QuickStart, page):
    admin_login(
        page, desk.news, desk.setting("DEMO_ADMIN_USERNAME"), desk.setting("DEMO_ADMIN_PASSWORD")
    )
    return page


def _serve_feeds(local_server: LocalServer, count: int) -> list[tuple[str, str, str]]:
    """`count` working feeds on the local server: (xmlUrl, title, htmlUrl) of each."""
    marker = uuid.uuid4().hex[:6]
    outlines = []
    for number in range(count):
        path = f"/opml-{marker}-{number:02d}.xml"
        body = FEED.format(base=local_server.url(""), marker=f"{marker}-{number}").encode()
        local_server.respond(path, body=body, headers={"Content-Type": "application/rss+xml"})
        outlines.append(
            (
                local_server.url(path),
                f"Importerad källa {number:02d} & co ({marker})",
                f"https://kalla{number}.example/",
            )
        )
    return outlines


def _opml(outlines: list[tuple[str, str, str]]) -> bytes:
    root = etree.Element("opml", version="2.0")
    etree.SubElement(etree.SubElement(root, "head"), "title").text = "Miniflux"
    body = etree.SubElement(root, "body")
    category = etree.SubElement(body, "outline", text="Apple")
    for url, title, site in outlines:
        etree.SubElement(
            category, "outline", type="rss", text=title, title=title, xmlUrl=url, htmlUrl=site
        )
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8")


def _outlines(document: bytes) -> set[tuple[str, str, str]]:
    root = etree.fromstring(document)
    return {
        (outline.get("xmlUrl"), outline.get("title"), outline.get("htmlUrl"))
        for outline in root.iter("outline")
        if outline.get("xmlUrl")
    }


def test_an_editor_imports_40_sources_from_opml_and_exports_the_same_outlines(
    desk: QuickStart, editor, local_server: LocalServer, tmp_path: Path
) -> None:
    imported = _serve_feeds(local_server, 40)
    upload = tmp_path / "kallor-fran-miniflux.opml"
    upload.write_bytes(_opml(imported))

    editor.goto(f"{desk.news}/admin/news/feed/")
    editor.get_by_role("link", name="Importera OPML").click()
    editor.set_input_files("#id_file", str(upload))
    editor.click("input[type=submit][value=Importera]")
    editor.wait_for_selector("#opml-summary")
    assert editor.inner_text("#opml-summary") == "40 tillagda, 0 fanns redan, 0 avvisade."
    editor.locator("#content").screenshot(path=str(SHOTS / "editors-opml-imported.png"))

    # Importing the same file again adds nothing.
    editor.set_input_files("#id_file", str(upload))
    editor.click("input[type=submit][value=Importera]")
    editor.wait_for_selector("#opml-summary")
    assert editor.inner_text("#opml-summary") == "0 tillagda, 40 fanns redan, 0 avvisade."

    editor.goto(f"{desk.news}/admin/news/feed/")
    with editor.expect_download() as download:
        editor.get_by_role("link", name="Exportera OPML").click()
    exported = _outlines(Path(download.value.path()).read_bytes())
    ours = {outline for outline in exported if outline[0] in {url for url, _, _ in imported}}
    assert ours == set(imported)

    # The worker fetches the imported sources like any other: their articles arrive.
    wait_for(
        lambda: local_server.requests_to(imported[-1][0].split(str(local_server.port), 1)[1]),
        seconds=120,
        what="the worker fetching an imported source",
    )


def _mails(desk: QuickStart) -> list[str]:
    """Every mail the quick start wrote (Django's file backend: one file per connection,
    messages separated by a line of 79 dashes), as text."""
    texts = []
    for path in sorted((desk.var_dir / "mail").glob("*")):
        for raw in path.read_bytes().split(b"\n" + b"-" * 79 + b"\n"):
            if raw.strip():
                message = email.message_from_bytes(raw, policy=email.policy.default)
                assert isinstance(message, EmailMessage)
                texts.append(f"Subject: {message['Subject']}\n\n{message.get_content()}")
    return texts


def test_a_failing_source_is_on_the_health_page_and_the_editors_get_one_mail(
    desk: QuickStart, editor, local_server: LocalServer
) -> None:
    site_url, feed_url = serve_site(local_server)
    editor.goto(f"{desk.news}/admin/news/feed/add/")
    editor.fill("#id_url", site_url)
    editor.click("input[name=_save]")
    editor.wait_for_selector(".messagelist .success")
    feed_path = feed_url.split(str(local_server.port), 1)[1]
    listed = f"{desk.news}/admin/news/feed/?q={feed_path.strip('/')}"

    # Discovery read the feed while the form was saved; the source's own first fetch is the
    # worker's, after it. Breaking the server before that one made the source fail (and pause)
    # before the editor asked for anything, and the editor's "Fetch now" paused it a second
    # time: two pauses, two mails. The editor sees the first fetch in the list.
    def fetched() -> bool:
        editor.goto(listed)
        cell = editor.locator("#result_list td.field-last_fetched_at").first
        return cell.inner_text().strip() not in ("", "-")

    wait_for(fetched, seconds=120, what="the source's first fetch")

    # The source's server breaks; the editor asks for a fetch now, and it fails.
    local_server.respond(feed_path, status=503, body=b"underhall")
    editor.goto(listed)
    editor.check("#result_list tbody input[name=_selected_action]")
    editor.select_option("select[name=action]", "fetch_now")
    editor.click("button[name=index]")
    editor.wait_for_selector(".messagelist .success")

    def notices() -> list[str]:
        return [text for text in _mails(desk) if feed_url in text]

    mails = wait_for(notices, seconds=120, what="the notice mail about the paused source")
    assert len(mails) == 1, mails
    assert "1 källa pausad" in mails[0] and "Hämta nu" in mails[0]
    # A link the editor can click: the quick start says where the service is (NEWS_PUBLIC_URL).
    assert f"{desk.news}/admin/news/feed/health/" in mails[0]

    editor.goto(f"{desk.news}/admin/news/feed/health/")
    paused = editor.locator("#health-paused tr", has_text="Testkällan")
    assert paused.count() >= 1
    assert "503" in paused.last.inner_text()
    editor.locator("#content-main").screenshot(path=str(SHOTS / "editors-health.png"))

    # The next run says nothing more: one mail per pause.
    ran = desk.python("news_site", "ingest")
    assert ran.returncode == 0, ran.stderr
    assert len(notices()) == 1


def test_an_editor_works_through_the_review_queue(
    desk: QuickStart, editor, local_server: LocalServer
) -> None:
    queue = f"{desk.news}/admin/news/summaryreview/"
    editor.goto(queue)
    rows = editor.locator("#result_list tbody tr")
    assert rows.count() >= 2, "the demo's model-written summaries are in the queue"
    # The top of the queue: the whole page is too large a picture for the docs.
    editor.screenshot(
        path=str(SHOTS / "editors-review-queue.png"),
        clip={"x": 0, "y": 0, "width": SCREEN_WIDTH, "height": 560},
    )

    # Approve the first: it leaves the queue.
    first_title = rows.nth(0).locator("td.field-article a").first.inner_text()
    rows.nth(0).locator("input[name=_selected_action]").check()
    editor.select_option("select[name=action]", "approve")
    editor.click("button[name=index]")
    assert "1 sammanfattning godkänd" in editor.inner_text(".messagelist")
    assert editor.locator("#result_list tbody tr", has_text=first_title).count() == 0

    # Correct the next one in place: it becomes the editor's and is reviewed.
    second = editor.locator("#result_list tbody tr").nth(0)
    second_title = second.locator("td.field-article a").first.inner_text()
    corrected = "Redaktörens rättelse: så här var det."
    second.locator("textarea").fill(corrected)
    editor.click("input[name=_save]")
    editor.wait_for_selector(".messagelist .success")
    assert editor.locator("#result_list tbody tr", has_text=second_title).count() == 0
    editor.goto(f"{queue}?visa=granskade&q={second_title[:40]}")
    assert editor.input_value("#result_list tbody textarea") == corrected

    # A new source's articles, with no model configured, keep the offline cut: the filter
    # lists them with the reason.
    site_url, _ = serve_site(local_server)
    editor.goto(f"{desk.news}/admin/news/feed/add/")
    editor.fill("#id_url", site_url)
    editor.click("input[name=_save]")
    editor.wait_for_selector(".messagelist .success")

    def offline_rows():
        editor.goto(f"{queue}?visa=offline&q=iOS 26.2")
        found = editor.locator("#result_list tbody tr")
        return found if found.count() else None

    found = wait_for(offline_rows, seconds=120, what="the new source's article in the filter")
    assert found.first.locator("td.field-why").inner_text().strip()
    editor.screenshot(path=str(SHOTS / "editors-review-offline.png"))


def test_every_admin_page_fits_the_screen_and_speaks_swedish(desk: QuickStart, editor) -> None:
    """At 1280 px no page is wider than the screen and no list hides columns in a sideways
    scroll; the visible text has no English word (the editors' data set aside: the demo's
    English sources, their titles and summaries)."""
    too_wide: dict[str, dict[str, int]] = {}
    english: dict[str, list[str]] = {}
    paths = admin_page_paths(editor, desk.news)
    assert len(paths) > 20, paths
    for path in paths:
        editor.goto(f"{desk.news}{path}")
        measured = overflow(editor)
        if measured["page"] > SCREEN_WIDTH or measured["list"] > 0:
            too_wide[path] = measured
        words = english_words(visible_ui_text(editor))
        if words:
            english[path] = sorted(words)
    assert not too_wide, too_wide
    assert not english, english


def test_the_english_word_check_finds_an_english_label() -> None:
    """The check above cannot pass by finding nothing: Django's own English labels trip it."""
    assert english_words("Select feed to change · Save and add another") == {
        "Select",
        "to",
        "and",
        "change",
        "Save",
        "add",
    }
    assert not english_words(
        "Välj flöde att ändra · Spara och lägg till ny · RSS OPML URL https://9to5mac.com/feed"
    )
