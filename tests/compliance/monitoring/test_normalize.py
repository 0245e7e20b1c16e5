"""Page normalisation: only a change a reader would see may change the hash."""

import re

import pytest

from compliance_site.monitoring.normalize import PageTooLong, content_hash, normalized_text

HTML = "text/html; charset=utf-8"

PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="csrf-token" content="{token}">
  <title>Home Education in Texas</title>
  <script>var started = {clock_ms}; window.dataLayer = [];</script>
  <style>.notice {{ color: red; }}</style>
  <link rel="stylesheet" href="/static/site.css?v={token}">
</head>
<body class="{body_class}">
  <!-- rendered by node {node} -->
  <nav><a href="/">Home</a> | <a href="/laws">Laws</a></nav>
  <main>
    <h1>Home school requirements</h1>
    <p>Parents must file a notice of intent within <strong>{days} days</strong> of
       withdrawing a child.</p>
    <p>Page last updated: {updated}</p>
    <form method="post"><input type="hidden" name="csrfmiddlewaretoken" value="{token}">
      <button>Subscribe</button></form>
    <noscript>Please enable JavaScript.</noscript>
    <svg viewBox="0 0 10 10"><title>icon</title></svg>
  </main>
  <footer>Server time {clock} &middot; Session {session} &middot; {visitors} visitors</footer>
</body>
</html>
"""


def page(**changes: str) -> bytes:
    values = {
        "token": "f3a9c1e07b5d42a8b9e6c3d1f0a7b2e4",
        "clock_ms": "1795000000000",
        "body_class": "home",
        "node": "web-1",
        "days": "30",
        "updated": "November 22, 2026",
        "clock": "10:42:07 AM EST",
        "session": "c2Vzc2lvbi0xMjM0NTY3ODkwYWJjZGVm",
        "visitors": "1,234",
    }
    values.update(changes)
    return PAGE.format(**values).encode("utf-8")


def test_a_page_keeps_only_its_visible_text() -> None:
    assert normalized_text(page(), HTML) == (
        "Home Education in Texas Home | Laws Home school requirements Parents must file a "
        "notice of intent within 30 days of withdrawing a child. Page last updated: "
        "Subscribe Server time · Session ·"
    )


def test_markup_scripts_tokens_and_timestamps_do_not_change_the_hash() -> None:
    first = page()
    second = page(
        token="9b8e7d6c5b4a39281706f5e4d3c2b1a0",
        clock_ms="1795000604800",
        body_class="home theme-dark",
        node="web-7",
        updated="Dec 1, 2026",
        clock="4:05 p.m.",
        session="ZGlmZmVyZW50LXNlc3Npb24tOTg3NjU0MzIx",
        visitors="98,765",
    )

    assert content_hash(first, HTML) == content_hash(second, HTML)


def test_whitespace_and_line_breaks_in_markup_do_not_change_the_hash() -> None:
    compact = b"<p>Notice due in 30 days.</p><p>Keep records.</p>"
    spread = b"<p>\n  Notice due in   30\tdays.\n</p>\n\n<p>Keep&nbsp;records.</p>\n"

    assert content_hash(compact, HTML) == content_hash(spread, HTML)


def test_inline_markup_does_not_split_words() -> None:
    assert normalized_text(b"<p>See <a href='/x'>section</a>s <em>25</em>.086.</p>", HTML) == (
        "See sections 25.086."
    )


def test_a_change_in_the_real_text_changes_the_hash() -> None:
    assert content_hash(page(days="30"), HTML) != content_hash(page(days="14"), HTML)


def test_the_hash_is_a_prefixed_sha256() -> None:
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", content_hash(page(), HTML))


@pytest.mark.parametrize(
    "volatile",
    [
        "12:34",
        "12:34:56",
        "9:05 pm",
        "11:30 A.M. CST",
        "2026-11-22",
        "2026-11-22T10:42:07Z",
        "11/22/2026",
        "11/22/26",
        "November 22, 2026",
        "Nov 22, 2026",
        "Sunday, Nov. 22nd, 2026",
        "1,234 visitors",
        "Visitors: 1234",
        "token 0123456789abcdef0123456789abcdef",
        "nonce dGhpcyBpcyBhIG5vbmNlIDEyMzQ1Njc4OTA=",
    ],
)
def test_volatile_tokens_are_removed(volatile: str) -> None:
    text = normalized_text(f"<p>Before {volatile} after</p>".encode(), HTML)

    assert text in ("Before after", "Before token after", "Before nonce after")


@pytest.mark.parametrize(
    "stamp",
    [
        "Last updated: 14 March 2026",
        "Last modified 3/14/26 at 9 am",
        "Page last reviewed: Tuesday, March 3, 2026",
        "Last Revised on March 2026",
        "Updated: 2026-03-14 09:00",
    ],
)
def test_dates_after_last_updated_phrases_are_removed_in_any_format(stamp: str) -> None:
    text = normalized_text(f"<p>{stamp}</p><p>Contact us</p>".encode(), HTML)

    assert re.search(r"\d|march|tuesday", text, re.IGNORECASE) is None
    assert text.endswith("Contact us")


def test_words_that_merely_look_like_stamps_are_kept() -> None:
    text = normalized_text(
        b"<p>Updated guidance for 2026 in Monroe County; a notwithstandingprovisionsclause.</p>",
        HTML,
    )

    assert text == "Updated guidance for 2026 in Monroe County; a notwithstandingprovisionsclause."


def test_hidden_elements_and_comments_are_dropped() -> None:
    html = (
        b"<div hidden><p>draft</p></div><span aria-hidden='true'>x</span>"
        b"<template><p>tpl</p></template><!-- note --><p>shown</p>"
    )

    assert normalized_text(html, HTML) == "shown"


def test_entities_are_unescaped() -> None:
    assert normalized_text(
        b"<p>Caf&eacute; &amp; &#8220;home&#x201D; &lt;school&gt;</p>", HTML
    ) == ("Café & \u201chome\u201d <school>")


def test_the_declared_charset_is_used() -> None:
    text = "Café \u2013 résumé"
    latin = f"<p>{text}</p>".encode("cp1252")
    utf8 = f"<p>{text}</p>".encode()

    assert normalized_text(latin, "text/html; charset=windows-1252") == text
    assert content_hash(latin, "text/html; charset=windows-1252") == content_hash(utf8, HTML)


def test_a_meta_charset_is_used_when_the_header_has_none() -> None:
    body = '<meta charset="iso-8859-1"><p>Señor</p>'.encode("latin-1")

    assert normalized_text(body, "text/html") == "Señor"


def test_undecodable_bytes_are_replaced_not_fatal() -> None:
    assert normalized_text(b"<p>ok \xff\xfe</p>", "text/html; charset=bogus") == "ok \ufffd\ufffd"


def test_a_missing_content_type_is_sniffed_as_html() -> None:
    assert normalized_text(b"  <!DOCTYPE html><p>Hi</p>", None) == "Hi"


def test_plain_text_is_decoded_and_collapsed() -> None:
    assert normalized_text(b"Rule  1.\r\n\r\nRule 2.\n", "text/plain") == "Rule 1. Rule 2."
    assert content_hash(b"Rule 1. Rule 2.", "text/plain") == content_hash(
        b"Rule 1.\n  Rule 2.\n", "text/plain; charset=utf-8"
    )


def test_binary_bodies_are_hashed_by_their_bytes() -> None:
    pdf = b"%PDF-1.7\n\x00\x01binary\n%%EOF"

    assert content_hash(pdf, "application/pdf") == (
        "sha256:" + __import__("hashlib").sha256(pdf).hexdigest()
    )
    assert content_hash(pdf, "application/pdf") != content_hash(pdf + b" ", "application/pdf")
    assert normalized_text(pdf, "application/pdf") == ""


def test_a_page_longer_than_the_read_cap_is_refused_not_compared_in_part() -> None:
    page_text = ("<p>Section text of the statute.</p>" * 10_000).encode()  # 350,000 characters

    with pytest.raises(PageTooLong, match="350000 characters long; the monitor reads up to"):
        content_hash(page_text, HTML, max_chars=300_000)
    assert content_hash(page_text, HTML, max_chars=400_000).startswith("sha256:")
