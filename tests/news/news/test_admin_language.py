"""One language per admin: the news admin's texts are English in the code and Swedish in its
catalogue (news_site/locale/sv), and the admin an editor opens shows the Swedish."""

import gettext
import re
import shutil
from pathlib import Path

import polib
import pytest
from django.core.management import call_command
from django.test import override_settings
from lxml import html as lxml_html

from tests.support.news_factories import EntryFactory, FeedFactory, StoryFactory

REPO_ROOT = Path(__file__).resolve().parents[3]
CATALOGUE = REPO_ROOT / "news_site" / "locale" / "sv" / "LC_MESSAGES" / "django.po"
# What makemessages reads for the news catalogue: the news service and the code it shares, not
# the catalogue itself (a `locale` directory found on the way would become where it writes).
NOT_NEWS = [
    "compliance_site",
    "tests",
    "benchmarks",
    "clients",
    "scripts",
    "deploy",
    "docs",
    "news_site/locale",
]
PLACEHOLDER = re.compile(r"%\(\w+\)[sd]|\{\w+\}")


def _catalogue() -> polib.POFile:
    return polib.pofile(str(CATALOGUE))


def _swedish_texts(*, words: int = 1) -> dict[str, str]:
    """msgid -> msgstr of the entries whose Swedish differs from the English source."""
    return {
        entry.msgid: entry.msgstr
        for entry in _catalogue()
        if entry.msgstr and entry.msgstr != entry.msgid and len(entry.msgid.split()) >= words
    }


def test_every_catalogue_entry_has_a_swedish_text_with_the_same_placeholders():
    catalogue = _catalogue()

    assert catalogue.untranslated_entries() == []
    assert catalogue.fuzzy_entries() == []
    assert catalogue.obsolete_entries() == []
    for entry in catalogue:
        texts = list(entry.msgstr_plural.values()) if entry.msgid_plural else [entry.msgstr]
        for text in texts:
            # A placeholder lost or misspelt in Swedish breaks the message at run time.
            assert sorted(PLACEHOLDER.findall(text)) == sorted(PLACEHOLDER.findall(entry.msgid))


@pytest.mark.skipif(shutil.which("xgettext") is None, reason="needs GNU gettext's xgettext")
def test_the_catalogue_holds_every_text_the_news_code_marks_and_no_other(tmp_path, monkeypatch):
    # makemessages (GNU xgettext) reads the code afresh into an empty catalogue: a text marked
    # for translation but missing from ours, or one of ours no code uses any more, shows here.
    ours = CATALOGUE.read_bytes()
    monkeypatch.chdir(REPO_ROOT)
    with override_settings(LOCALE_PATHS=[tmp_path]):
        call_command("makemessages", locale=["sv"], ignore_patterns=NOT_NEWS, verbosity=0)
    extracted = polib.pofile(str(tmp_path / "sv" / "LC_MESSAGES" / "django.po"))

    def keys(catalogue: polib.POFile) -> set[tuple[str | None, str]]:
        return {(entry.msgctxt, entry.msgid) for entry in catalogue if not entry.obsolete}

    assert CATALOGUE.read_bytes() == ours
    assert keys(extracted) == keys(_catalogue())
    assert len(keys(extracted)) > 200


def test_compile_catalogues_writes_the_mo_django_reads_without_fuzzy_entries(tmp_path):
    messages = tmp_path / "sv" / "LC_MESSAGES"
    messages.mkdir(parents=True)
    catalogue = _catalogue()
    catalogue.append(polib.POEntry(msgid="Draft", msgstr="Utkast", flags=["fuzzy"]))
    catalogue.save(str(messages / "django.po"))

    with override_settings(LOCALE_PATHS=[tmp_path]):
        call_command("compile_catalogues", verbosity=0)

    with (messages / "django.mo").open("rb") as compiled:
        translations = gettext.GNUTranslations(compiled)
    assert translations.gettext("Source health") == "Källornas hälsa"
    assert translations.ngettext("%(count)d summary approved.", "", 2) == (
        "%(count)d sammanfattningar godkända."
    )
    # As msgfmt does: a fuzzy translation is a draft, never shown.
    assert translations.gettext("Draft") == "Draft"


def _visible_text(page: str) -> str:
    document = lxml_html.fromstring(page)
    for hidden in document.xpath("//script|//style|//template"):
        hidden.drop_tree()
    return " ".join(document.text_content().split())


@pytest.mark.django_db
def test_the_admin_an_editor_opens_is_swedish(editor_client):
    feed = FeedFactory(title="Källan")
    story = StoryFactory(title="Tråden")
    EntryFactory(feed=feed, story=story, title="Artikeln")
    pages = [
        "/admin/",
        "/admin/news/feed/",
        "/admin/news/feed/add/",
        f"/admin/news/feed/{feed.pk}/change/",
        "/admin/news/feed/health/",
        "/admin/news/feed/import-opml/",
        "/admin/news/entry/",
        "/admin/news/summaryreview/",
        f"/admin/news/story/{story.pk}/change/",
        "/admin/podcasts/podcastepisode/",
    ]
    texts = {}
    for path in pages:
        response = editor_client.get(path)
        assert response.status_code == 200, path
        texts[path] = _visible_text(response.content.decode())

    # The catalogue's English sources of two words or more, none of which a Swedish page shows
    # (single words such as "source" may be a title's own).
    for path, text in texts.items():
        shown = [english for english in _swedish_texts(words=2) if english in text]
        assert shown == [], path
    assert "Redaktionens verktyg" in texts["/admin/"]
    assert "Tasks Database Backend" not in texts["/admin/"]
    assert "Hämta nu (och återuppta pausade)" in texts["/admin/news/feed/"]
    assert "Flödets adress eller webbplatsens" in texts["/admin/news/feed/add/"]
    change = texts[f"/admin/news/feed/{feed.pk}/change/"]
    assert "Villkorlig hämtning" in change
    assert "Sätts efter flera dagars fel" in change
    assert "Artiklar i nyhetstråden (nyast först)" in texts[f"/admin/news/story/{story.pk}/change/"]
