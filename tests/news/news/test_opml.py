"""Sources in and out as OPML: the files other readers export, the commands, the admin, and
files written by an adversary."""
# The peers' exports are kept as they write them, long lines included.
# ruff: noqa: E501, RUF001

import io
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from lxml import etree

from news_site.news.models import Feed, FeedKind
from news_site.news.opml import OpmlError, opml_import
from shared.untrusted_text import without_unstorable

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]

# The shapes the three peers export (trimmed to what matters: nesting, attributes, extras).
MINIFLUX = b"""<?xml version="1.0" encoding="UTF-8"?>
<opml version="2.0">
    <head>
        <title>Miniflux</title>
        <dateCreated>Tue, 24 Nov 2026 10:00:00 UTC</dateCreated>
    </head>
    <body>
        <outline text="Apple">
            <outline title="MacRumors" text="MacRumors" xmlUrl="https://feeds.macrumors.com/MacRumors-All" htmlUrl="https://www.macrumors.com" type="rss"></outline>
            <outline title="9to5Mac" text="9to5Mac" xmlUrl="https://9to5mac.com/feed/" htmlUrl="https://9to5mac.com" type="rss"></outline>
        </outline>
    </body>
</opml>
"""
FRESHRSS = """<?xml version="1.0" encoding="UTF-8"?>
<opml version="2.0" xmlns:frss="https://freshrss.org/opml">
\t<head>
\t\t<title>FreshRSS</title>
\t\t<dateCreated>Tue, 24 Nov 2026 10:00:00 +0000</dateCreated>
\t</head>
\t<body>
\t\t<outline text="Svenska">
\t\t\t<outline text="Feber – Apple" type="rss" xmlUrl="https://feber.se/rss/apple/" htmlUrl="https://feber.se/" description="Teknik" frss:cssFullContent="article"/>
\t\t</outline>
\t\t<outline text="Utan kategori">
\t\t\t<outline text="AppleInsider" type="rss" xmlUrl="https://appleinsider.com/rss/news/" htmlUrl="https://appleinsider.com/"/>
\t\t</outline>
\t</body>
</opml>
""".encode()
TTRSS = b"""<?xml version="1.0" encoding="utf-8"?>
<opml version="1.0">
  <head>
    <dateCreated>Tue, 24 Nov 2026 10:00:00 +0000</dateCreated>
    <title>Tiny Tiny RSS Feed Export</title>
  </head>
  <body>
    <outline text="Uncategorized">
      <outline type="rss" text="The Verge - Apple" xmlUrl="https://www.theverge.com/apple/rss/index.xml" htmlUrl="https://www.theverge.com/apple"/>
    </outline>
    <outline text="tt-rss-prefs" schema-version="146">
      <outline pref-name="ALLOW_DUPLICATE_POSTS" value="false"/>
    </outline>
    <outline text="tt-rss-filters" schema-version="146">
      <outline filter-type="2"><![CDATA[{"enabled":true}]]></outline>
    </outline>
  </body>
</opml>
"""


def _import(path: Path, data: bytes) -> tuple[str, str]:
    path.write_bytes(data)
    out, err = io.StringIO(), io.StringIO()
    call_command("import_opml", str(path), stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def _export() -> bytes:
    out = io.StringIO()
    call_command("export_opml", stdout=out)
    return out.getvalue().encode("utf-8")


def _outlines(document: bytes) -> list[dict[str, str]]:
    root = etree.fromstring(document)
    return [dict(outline.attrib) for outline in root.iter("outline")]


@pytest.mark.parametrize(
    ("export", "expected"),
    [
        (
            MINIFLUX,
            {
                "https://feeds.macrumors.com/MacRumors-All": (
                    "MacRumors",
                    "https://www.macrumors.com",
                ),
                "https://9to5mac.com/feed/": ("9to5Mac", "https://9to5mac.com"),
            },
        ),
        (
            FRESHRSS,
            {
                "https://feber.se/rss/apple/": ("Feber – Apple", "https://feber.se/"),
                "https://appleinsider.com/rss/news/": ("AppleInsider", "https://appleinsider.com/"),
            },
        ),
        (
            TTRSS,
            {
                "https://www.theverge.com/apple/rss/index.xml": (
                    "The Verge - Apple",
                    "https://www.theverge.com/apple",
                )
            },
        ),
    ],
    ids=["miniflux", "freshrss", "tt-rss"],
)
def test_the_peers_exports_import_with_titles_and_sites(tmp_path, export, expected):
    out, err = _import(tmp_path / "peer.opml", export)

    assert err == ""
    assert out.strip() == f"{len(expected)} added, 0 already registered, 0 refused"
    stored = {feed.url: (feed.title, feed.site_url) for feed in Feed.objects.all()}
    assert stored == expected
    assert {feed.kind for feed in Feed.objects.all()} == {FeedKind.ARTICLES}


def test_importing_the_same_file_again_adds_nothing(tmp_path):
    _import(tmp_path / "a.opml", MINIFLUX)
    out, _ = _import(tmp_path / "a.opml", MINIFLUX)

    assert out.strip() == "0 added, 2 already registered, 0 refused"
    assert Feed.objects.count() == 2


def test_export_then_import_into_an_empty_service_gives_the_same_outlines(tmp_path, make_feed):
    for number in range(40):
        make_feed(
            title=f"Källa {number:02d} & <{number}>",
            url=f"https://source{number}.example/feed?a=1&b={number}",
            site_url=f"https://source{number}.example/" if number % 3 else "",
        )
    make_feed(title="Vår podd", url="https://podd.example/feed", kind=FeedKind.PODCAST)
    first = _export()
    assert len(_outlines(first)) == 40  # the service's own podcast feed is not a source

    Feed.objects.all().delete()
    out, _ = _import(tmp_path / "export.opml", first)
    assert out.strip() == "40 added, 0 already registered, 0 refused"
    assert _outlines(_export()) == _outlines(first)


@given(
    titles=st.lists(
        st.text(st.characters(codec="utf-8"), min_size=1, max_size=80), min_size=1, max_size=5
    )
)
@hypothesis_settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
def test_any_title_survives_the_round_trip_as_the_service_stores_it(make_feed, titles):
    """Whatever a title holds (controls, surrogates, markup, NUL), the export is valid XML and
    importing it gives back the titles the service stored."""
    Feed.objects.all().delete()
    for number, title in enumerate(titles):
        make_feed(title=title.replace("\x00", ""), url=f"https://t{number}.example/f")
    try:
        document = _export()
    except ValueError:
        pytest.fail("the export refused a stored title")
    stored = {feed.url: feed.title for feed in Feed.objects.all()}
    Feed.objects.all().delete()
    report = opml_import(data=document)
    assert not report.refused
    again = {feed.url: feed.title for feed in Feed.objects.all()}
    for url, title in stored.items():
        expected = " ".join(without_unstorable(title).split())[:200] or url
        assert again[url] == expected, (title, again[url])


def test_one_bad_outline_is_refused_and_the_others_are_added(tmp_path):
    document = """<?xml version="1.0"?><opml version="2.0"><body>
      <outline text="Bra" xmlUrl="https://good.example/feed"/>
      <outline text="Skript" xmlUrl="javascript:alert(1)"/>
      <outline text="Lokal fil" xmlUrl="file:///etc/passwd"/>
      <outline text="Ingen adress" xmlUrl=""/>
      <outline text="Också bra" xmlUrl="https://also.example/rss"/>
    </body></opml>""".encode()
    (tmp_path / "mixed.opml").write_bytes(document)
    out, err = io.StringIO(), io.StringIO()

    with pytest.raises(CommandError, match="3 outline"):
        call_command("import_opml", str(tmp_path / "mixed.opml"), stdout=out, stderr=err)

    assert sorted(Feed.objects.values_list("url", flat=True)) == [
        "https://also.example/rss",
        "https://good.example/feed",
    ]
    assert "2 added, 0 already registered, 3 refused" in out.getvalue()
    assert "outline 2 (Skript)" in err.getvalue()
    assert "outline 3 (Lokal fil)" in err.getvalue()
    # The operator's command speaks English whatever the service's language.
    assert "not an absolute http(s) address" in err.getvalue()


@pytest.mark.parametrize(
    "document",
    [
        b"not xml at all",
        b"<html><body><outline xmlUrl='https://x.example/'/></body></html>",
        b"\xff\xfe\x00<",
        b"",
    ],
    ids=["text", "html", "binary", "empty"],
)
def test_a_file_that_is_not_opml_is_refused_whole(tmp_path, document):
    path = tmp_path / "bad.opml"
    path.write_bytes(document)

    with pytest.raises(CommandError, match=r"bad\.opml"):
        call_command("import_opml", str(path), stdout=io.StringIO())
    assert not Feed.objects.exists()


def test_entities_are_never_expanded(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOPSECRET")
    xxe = f"""<?xml version="1.0"?>
<!DOCTYPE opml [<!ENTITY leak SYSTEM "file://{secret}">
<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">
<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">]>
<opml version="2.0"><body>
<outline text="&leak;" xmlUrl="https://x.example/feed"/>
<outline text="&d;" xmlUrl="https://y.example/feed"/>
</body></opml>""".encode()

    try:
        report = opml_import(data=xxe)
    except OpmlError:
        return  # refusing the file is as good as not expanding it
    titles = " ".join(Feed.objects.values_list("title", flat=True))
    assert "TOPSECRET" not in titles
    assert "aaaaaaaaaa" * 10 not in titles
    assert len(report.added) + len(report.refused) == 2


def test_an_editor_imports_and_exports_in_the_admin(editor_client, make_feed):
    make_feed(title="Befintlig", url="https://feber.se/rss/apple/")
    page = editor_client.get("/admin/news/feed/")
    assert "Importera OPML" in page.content.decode()

    form = editor_client.get("/admin/news/feed/import-opml/")
    assert form.status_code == 200
    answer = editor_client.post(
        "/admin/news/feed/import-opml/",
        {"file": io.BytesIO(FRESHRSS)},
        format="multipart",
    )
    html = answer.content.decode()
    assert answer.status_code == 200
    assert re.search(r"1 tillagda, 1 fanns redan, 0 avvisade", html), html[:2000]

    broken = editor_client.post("/admin/news/feed/import-opml/", {"file": io.BytesIO(b"<x/>")})
    assert "Filen kunde inte läsas som OPML" in broken.content.decode()
    assert "inte OPML: dokumentets rot är inte &lt;opml&gt;" in broken.content.decode()

    mixed = editor_client.post(
        "/admin/news/feed/import-opml/",
        {
            "file": io.BytesIO(
                b'<opml version="2.0"><body><outline text="Skript" xmlUrl="javascript:x"/></body></opml>'
            )
        },
    )
    assert "Skript): inte en fullständig http(s)-adress" in mixed.content.decode()

    exported = editor_client.get("/admin/news/feed/export-opml/")
    assert exported.status_code == 200
    assert exported["Content-Type"].startswith("text/x-opml")
    assert "attachment" in exported["Content-Disposition"]
    urls = {outline["xmlUrl"] for outline in _outlines(exported.content)}
    assert urls == {"https://feber.se/rss/apple/", "https://appleinsider.com/rss/news/"}


def test_the_session_cookie_is_the_news_services_own():
    assert settings.SESSION_COOKIE_NAME == "news_sessionid"
