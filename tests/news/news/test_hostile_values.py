"""One rule for values, news side (issue 21): characters no store can hold or no reader should
see (NUL, C0/C1 controls, lone surrogates, noncharacters, bidirectional overrides) in any text
field of a feed item and of a model answer, through the real `ingest` command against a local
source and a local OpenAI-compatible model, on SQLite and PostgreSQL.

Each case checks that the run finishes, that the item beside the hostile one is stored and
summarised, that nothing stored holds such a character, and that every surface stays valid
(JSON parses, RSS parses as XML, markdown and front matter as the agent surfaces check them)
and shows none of them.
"""

import json
import xml.etree.ElementTree as ET

import pytest
from django.core.management import call_command
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from news_site.news.models import Entry, Feed, SummaryState, Tag
from tests.news.conftest import FakeModel
from tests.news.hostile import assert_surfaces_valid

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.every_backend]

GOOD_TITLE = "Bra nyhet om Apple"
FIELDS = ("channel", "guid", "title", "author", "category", "description", "content")
GOOD_SUMMARY = "Apple visar en ny iPhone, enligt källan."
BIDI = {chr(c) for c in [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]}
HOSTILE = [
    "\x00", "\x01", "\x08", "\x0b", "\x0c", "\x1b", "\x1f", "\x7f", "\x85", "\x9f",
    "\ud800", "\udbff", "\udc00", "\udfff", "\ud83d\ude00",
    "\ufdd0", "\ufdef", "\ufffe", "\uffff", "\U0001fffe", "\U0010ffff",
    "\u202a", "\u202e", "\u2066", "\u2069",
]  # fmt: skip


def _forbidden(char: str) -> bool:
    """The test's own statement of the class (independent of shared.untrusted_text)."""
    code = ord(char)
    return (
        (code < 0x20 and char not in "\t\n\r")
        or 0x7F <= code <= 0x9F
        or 0xD800 <= code <= 0xDFFF
        or 0xFDD0 <= code <= 0xFDEF
        or (code & 0xFFFE) == 0xFFFE
        or char in BIDI
    )


def _clean(text: str) -> bool:
    return not any(_forbidden(c) for c in text)


_text = st.lists(
    st.one_of(
        st.sampled_from(HOSTILE),
        st.sampled_from(["Apple", " ", "iPhone", "åäö", "<b>", "&amp;", "]("]),
        st.characters(codec="utf-8", exclude_categories=("Cs",)),
    ),
    min_size=1,
    max_size=10,
).map("".join)


def _xml_text(text: str, mode: str) -> bytes:
    """`text` in an XML document: every character as a numeric reference (surrogates too, as
    a pair of references or a lone one), or raw bytes (surrogates encoded as if characters)."""
    if mode == "references":
        return "".join(f"&#{ord(c)};" for c in text).encode()
    escaped = text.replace("&", "&amp;").replace("<", "&lt;")
    return escaped.encode("utf-8", errors="surrogatepass")


def _feed(server, fields: dict[str, str], mode: str) -> bytes:
    def x(name: str) -> bytes:
        return _xml_text(fields[name], mode)

    return (
        b'<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0" '
        b'xmlns:dc="http://purl.org/dc/elements/1.1/" '
        b'xmlns:content="http://purl.org/rss/1.0/modules/content/"><channel>'
        b"<title>K\xc3\xa4llan " + x("channel") + b"</title><link>https://source.example/</link>"
        b"<item><guid isPermaLink='false'>g-" + x("guid") + b"</guid>"
        b"<title>Apple " + x("title") + b"</title>"
        b"<link>" + server.url("/a/hostile").encode() + b"</link>"
        b"<dc:creator>" + x("author") + b"</dc:creator>"
        b"<category>" + x("category") + b"</category>"
        b"<description>Apple " + x("description") + b"</description>"
        b"<content:encoded>" + x("content") + b"</content:encoded></item>"
        b"<item><guid>good</guid><title>" + GOOD_TITLE.encode() + b"</title>"
        b"<link>" + server.url("/a/good").encode() + b"</link>"
        b"<description>Apple visar en ny iPhone.</description></item>"
        b"</channel></rss>"
    )


def _model(server, answer: dict) -> None:
    """The model answers the good item politely and the hostile one with `answer`, written as
    JSON with escapes (`\\ud800`: JSON can carry lone surrogates, which a decoder gives back)."""

    def route(request) -> None:
        prompt = json.loads(server.requests_to("/v1/chat/completions")[-1][3])
        user = prompt["messages"][1]["content"]
        content = (
            {
                "summary_sv": GOOD_SUMMARY,
                "summary_original": GOOD_SUMMARY,
                "tags": ["iPhone"],
                "platform_relevant": True,
            }
            if f"Rubrik: {GOOD_TITLE}" in user
            else answer
        )
        body = json.dumps(FakeModel.completion(json.dumps(content))).encode()
        request.send_response(200)
        request.send_header("Content-Type", "application/json")
        request.send_header("Content-Length", str(len(body)))
        request.end_headers()
        request.wfile.write(body)

    server.route("/v1/chat/completions", route)


def _page(text: str) -> bytes:
    return f"<html><body><article><p>{text}</p></article></body></html>".encode()


def _run(server, feed_body: bytes, answer: dict) -> None:
    Feed.objects.all().delete()
    Tag.objects.all().delete()
    _model(server, answer)
    server.respond("/feed.xml", body=feed_body, headers={"Content-Type": "application/rss+xml"})
    server.respond(
        "/a/hostile", body=_page("Apple visar något."), headers={"Content-Type": "text/html"}
    )
    server.respond(
        "/a/good", body=_page("Apple visar en ny iPhone."), headers={"Content-Type": "text/html"}
    )
    call_command("add_feed", server.url("/feed.xml"))
    call_command("ingest")


def _assert_stored_clean() -> None:
    for model in (Entry, Feed, Tag):
        for row in model.objects.values():
            for name, value in row.items():
                assert not isinstance(value, str) or _clean(value), (model.__name__, name, value)


def _strings(value: object):
    if isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, str):
        yield value


def _assert_surfaces_show_none() -> None:
    client = Client()
    paths = ["/entries.json", "/api/v1/entries", "/index.md", "/llms.txt", "/entries.rss"]
    for pk in Entry.objects.values_list("pk", flat=True):
        paths += [f"/entries/{pk}.json", f"/api/v1/entries/{pk}", f"/entries/{pk}.md"]
    for path in paths:
        response = client.get(path)
        assert response.status_code == 200, path
        text = response.content.decode("utf-8")
        if path.endswith(".rss"):
            root = ET.fromstring(response.content)  # noqa: S314 - our own answer
            texts = [t for element in root.iter() for t in (element.text, element.tail) if t]
        elif path.endswith((".md", ".txt")):
            texts = [text]
        else:
            texts = list(_strings(json.loads(text)))
        for value in texts:
            assert _clean(value), (path, value)


def _assert_the_good_item_published() -> None:
    good = Entry.objects.get(title=GOOD_TITLE)
    assert good.summary_state == SummaryState.TRANSLATED, good.summary_error
    assert good.summary_translated == GOOD_SUMMARY
    # The hostile item is stored too: its link is good, its text only loses characters.
    assert Entry.objects.count() == 2


@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    fields=st.fixed_dictionaries({name: _text for name in FIELDS}),
    mode=st.sampled_from(["references", "raw"]),
    answer=st.fixed_dictionaries(
        {
            "summary_sv": _text.map(lambda t: f"Apple {t} sammanfattning."),
            "summary_original": _text,
            "tags": st.lists(_text, max_size=3),
            "platform_relevant": st.just(True),
        }
    ),
)
def test_hostile_characters_in_any_item_or_answer_field_stop_nothing_and_reach_no_surface(
    server, private_fetching, fake_model, fields, mode, answer
):
    _run(server, _feed(server, fields, mode), answer)

    _assert_the_good_item_published()
    _assert_stored_clean()
    _assert_surfaces_show_none()
    assert_surfaces_valid()


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        (b"Apple &#xD800;lone", "Apple lone"),
        (b"Apple &#55357;&#56832; emoji", "Apple \U0001f600 emoji"),
        (b"Apple &#xd83d;&#xDE00;&#xDFFF; hex", "Apple \U0001f600 hex"),
        ("Apple \ud83d\ude00 cesu \udfff".encode(errors="surrogatepass"), "Apple \U0001f600 cesu "),
    ],
    ids=["lone-reference", "pair-of-references", "hex-pair-and-lone", "encoded-surrogates"],
)
def test_surrogates_in_one_item_lose_no_item_of_the_source(
    server, private_fetching, fake_model, title, expected
):
    fields = dict.fromkeys(FIELDS, "x")
    body = _feed(server, fields, "raw")
    body = body.replace(b"<title>Apple x</title>", b"<title>" + title + b"</title>")
    _run(server, body, {"summary_sv": "Apple visar något nytt.", "tags": ["iPhone"]})

    _assert_the_good_item_published()
    hostile = Entry.objects.exclude(title=GOOD_TITLE).get()
    assert hostile.title == " ".join(expected.split())
    assert Feed.objects.get().last_outcome == "ok"


def test_model_text_is_stored_as_plain_text_without_overrides_or_controls(
    server,
    private_fetching,
    fake_model,
    mcp_server,
):
    fields = dict.fromkeys(FIELDS, "x")
    answer = {
        "summary_sv": "Apple\u202e och AT&amp;T\x1b[31m visar\x00 en iPhone \u2066x\u2069.",
        "summary_original": "Apple &lt;b&gt;shows\x85 an iPhone.",
        "tags": ["\u202eiPhone", "Mac\x00", "\ufffe"],
        "platform_relevant": True,
    }
    _run(server, _feed(server, fields, "raw"), answer)

    entry = Entry.objects.exclude(title=GOOD_TITLE).get()
    assert entry.summary_translated == "Apple och AT&T[31m visar en iPhone x."
    assert entry.summary_original == "Apple <b>shows an iPhone."
    assert sorted(entry.tags.values_list("name", flat=True)) == ["Mac", "iPhone"]
    _assert_surfaces_show_none()
    assert_surfaces_valid()
    entry_answers = [
        mcp_server.call("get_entry", {"entry_id": entry.pk}),
        mcp_server.call("latest_news", {}),
    ]
    for result in entry_answers:
        assert not result.is_error
        assert "visar en iPhone" in " ".join(part.text for part in result.content)
        for text in [*(part.text for part in result.content), *_strings(result.structured_content)]:
            assert _clean(text), text
