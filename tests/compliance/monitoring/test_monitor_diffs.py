"""Reviewable monitor changes: a served page that changes one paragraph raises a flag whose
diff (linked from the review report and shown in the admin) holds exactly that paragraph; PDFs
are compared by their text, so a regenerated PDF with the same words does not flag."""

import html
import re

import httpx
import pytest

from compliance_site.monitoring.diffs import SNAPSHOT_TEXT_MAX_CHARS, text_bounded
from compliance_site.monitoring.models import ReviewFlag, SourceSnapshot
from compliance_site.monitoring.services import monitor_sources
from tests.compliance.builders import state_payload
from tests.support.inprocess import BASE_URL, DjangoTransport
from tests.support.shared_factories import UserFactory

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]

PARAGRAPHS = [
    "Parents must file a notice of intent with the district.",
    "The notice is due within 30 days of starting home education.",
    "Instruction must cover reading, writing and arithmetic.",
    "Records of attendance are kept for two years.",
]
HTML = {"Content-Type": "text/html; charset=utf-8"}


def page(paragraphs: list[str], stamp: str = "March 1, 2026") -> bytes:
    body = "\n".join(f"<p>{html.escape(text)}</p>" for text in paragraphs)
    return (
        f"<html><head><title>Home education</title><script>var n = 1;</script></head>"
        f"<body><nav>Menu</nav>{body}\n<p>Last updated: {stamp}</p></body></html>"
    ).encode()


def pdf(lines: list[str], created: str) -> bytes:
    """A small PDF with one line of text per entry; `created` changes only its bytes."""
    text = " ".join(f"({line}) Tj 0 -16 Td" for line in lines)
    content = f"BT /F1 12 Tf 72 720 Td {text} ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        f"<< /Producer (Forms office) /CreationDate (D:{created}) >>".encode(),
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R /Info 6 0 R >>\n" % (len(objects) + 1)
    out += b"startxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)


@pytest.fixture
def monitored(data_repo, run_reindex, local_server, settings):
    settings.FETCH_ALLOW_PRIVATE_NETWORKS = True
    settings.MONITOR_TIMEOUT_SECONDS = 2
    sources = [
        {"name": "Texas rule", "url": local_server.url("/tx")},
        {"name": "Texas form", "url": local_server.url("/tx-form")},
    ]
    data_repo.write("TX", state_payload("TX", sources=sources))
    data_repo.commit("Seed with local sources")
    run_reindex()
    local_server.respond("/tx", body=page(PARAGRAPHS), headers=HTML)
    form = pdf(["Notice of intent", "Due within 30 days"], created="20260101090000")
    local_server.respond("/tx-form", body=form, headers={"Content-Type": "application/pdf"})
    monitor_sources()
    return local_server


@pytest.fixture
def reviewer(served_queries) -> httpx.Client:
    UserFactory(username="reviewer", password="correct horse", superuser=True)
    client = httpx.Client(transport=DjangoTransport(served_queries), base_url=BASE_URL)
    login = client.get("/admin/login/")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', login.text)[1]
    client.post(
        "/admin/login/",
        data={"username": "reviewer", "password": "correct horse", "csrfmiddlewaretoken": token},
        headers={"Referer": BASE_URL + "/admin/login/"},
    )
    yield client
    client.close()


def _changed_lines(diff: str) -> list[str]:
    return [
        line
        for line in diff.splitlines()
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]


def test_one_changed_paragraph_is_exactly_what_the_linked_diff_shows(
    monitored, anonymous, reviewer
):
    changed = [*PARAGRAPHS]
    changed[1] = "The notice is due within 14 days of starting home education."
    monitored.respond("/tx", body=page(changed, stamp="November 20, 2026"), headers=HTML)

    report = monitor_sources()

    assert report.changed == [f"TX {monitored.url('/tx')}"]
    item = anonymous.get("/review_flags").json()["data"]["flagged"][0]
    assert item["abbreviation"] == "TX"
    snapshot = ReviewFlag.objects.get().snapshot
    assert item["diff_url"] == f"/admin/monitoring/sourcesnapshot/{snapshot.pk}/change/"
    assert _changed_lines(snapshot.diff) == [f"-{PARAGRAPHS[1]}", f"+{changed[1]}"]
    shown = reviewer.get(item["diff_url"])
    assert shown.status_code == 200
    diff_html = re.search(r'<pre class="snapshot-diff">(.*?)</pre>', shown.text, re.S)[1]
    assert _changed_lines(html.unescape(diff_html)) == [f"-{PARAGRAPHS[1]}", f"+{changed[1]}"]
    # Only the newest successful fetch of a URL keeps its text.
    kept = SourceSnapshot.objects.filter(url=monitored.url("/tx")).exclude(text="")
    assert [s.pk for s in kept] == [snapshot.pk]
    assert snapshot.text.splitlines()[:5] == ["Home education", "Menu", *changed[:3]]


def test_a_regenerated_pdf_with_the_same_text_does_not_flag(monitored):
    same_words = pdf(["Notice of intent", "Due within 30 days"], created="20261120093000")
    monitored.respond("/tx-form", body=same_words, headers={"Content-Type": "application/pdf"})

    assert monitor_sources().changed == []

    new_words = pdf(["Notice of intent", "Due within 14 days"], created="20261127093000")
    monitored.respond("/tx-form", body=new_words, headers={"Content-Type": "application/pdf"})
    assert monitor_sources().changed == [f"TX {monitored.url('/tx-form')}"]
    snapshot = ReviewFlag.objects.get().snapshot
    assert _changed_lines(snapshot.diff) == ["-Due within 30 days", "+Due within 14 days"]


def test_a_pdf_without_readable_text_is_compared_by_its_bytes(monitored):
    headers = {"Content-Type": "application/pdf"}
    monitored.respond("/tx-form", body=b"%PDF-1.7 scanned form, version 1", headers=headers)
    # From words to no words is a change; from then on the bytes are compared.
    assert monitor_sources().changed == [f"TX {monitored.url('/tx-form')}"]
    assert monitor_sources().changed == []
    monitored.respond("/tx-form", body=b"%PDF-1.7 scanned form, version 2", headers=headers)

    assert monitor_sources().changed == [f"TX {monitored.url('/tx-form')}"]
    # Nothing to diff: the flags link the fetches, whose diffs say so.
    assert list(ReviewFlag.objects.values_list("snapshot__diff", flat=True)) == ["", ""]


def test_the_kept_text_is_bounded_at_a_paragraph_boundary():
    paragraphs = [f"Paragraph {n} " + "x" * 990 for n in range(400)]

    text = text_bounded(paragraphs)

    assert len(text) <= SNAPSHOT_TEXT_MAX_CHARS
    lines = text.splitlines()
    assert lines[:-1] == paragraphs[: len(lines) - 1]
    assert lines[-1].startswith("[... cut")


def test_characters_no_store_can_hold_are_dropped_from_the_kept_text(monitored):
    hostile = [*PARAGRAPHS]
    hostile[2] = "Instruction must cover\x00 reading, \u202ewriting\u202c and arithmetic\x07."
    monitored.respond("/tx", body=page(hostile), headers=HTML)

    report = monitor_sources()

    assert report.failed == 0
    snapshot = ReviewFlag.objects.get().snapshot
    # libxml2 reads NUL as U+FFFD; the bidi override and the bell are removed.
    assert _changed_lines(snapshot.diff) == [
        f"-{PARAGRAPHS[2]}",
        "+Instruction must cover\ufffd reading, writing and arithmetic.",
    ]
    assert not any(c in snapshot.text for c in "\x00\x07\u202e\u202c")
