"""Article pages handed to the model: decoded by their declared charset (HTTP header, then
<meta charset>, then UTF-8) and reduced to the article's own text, through the real ingest
against a local source and a local OpenAI-compatible model."""

import pytest

from news_site.ingest.services import ingest_run
from news_site.news.models import Entry
from news_site.news.summarise import ChatModel

pytestmark = pytest.mark.django_db

ARTICLE = (
    "Äpplet presenterar en ny iPhone med större skärm och bättre kamera i Cupertino.",
    "Den kommer i butik om två veckor till samma pris som förra årets modell.",
)
FURNITURE = ("Huvudmeny", "Populärt i sidofältet", "Relaterad läsning", "Copyright Källan AB")


def _page(meta: str = "") -> str:
    return f"""<!doctype html><html><head>{meta}<title>Källan</title>
<meta property="og:image" content="/bild.jpg"></head><body>
<header class="site-header"><a href="/">Källan</a></header>
<nav><a href="/">Hem</a> <a href="/nyheter">Huvudmeny</a></nav>
<div class="layout page-with-sidebar">
  <div class="sidebar"><p>Populärt i sidofältet just nu: något helt annat än artikeln.</p></div>
  <div class="story"><h1>Ny iPhone</h1><p>{ARTICLE[0]}</p><p>{ARTICLE[1]}</p>
    <ul class="links"><li><a href="/x">Relaterad läsning om något annat i dag</a></li>
    <li><a href="/y">Ännu en länk till en annan artikel här</a></li></ul></div>
</div>
<div id="cookie-consent"><p>Vi använder kakor för att sidan ska fungera bättre.</p></div>
<footer>Copyright Källan AB</footer></body></html>"""


CASES = {
    "http-header": (_page().encode("cp1252"), "text/html; charset=windows-1252"),
    "meta-charset": (_page('<meta charset="iso-8859-1">').encode("cp1252"), "text/html"),
    "meta-http-equiv": (
        _page('<meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-15">').encode(
            "iso-8859-15"
        ),
        "text/html",
    ),
    # The header wins over a page that claims another encoding.
    "header-over-meta": (
        _page('<meta charset="utf-8">').encode("cp1252"),
        "text/html; charset=latin1",
    ),
    "utf-8-default": (_page().encode("utf-8"), "text/html"),
    "not-text-encodings": (
        _page('<meta charset="rot13">').encode("utf-8"),
        "text/html; charset=base64",
    ),
    "unknown-label": (_page('<meta charset="no-such-encoding">').encode("utf-8"), "text/html"),
}


@pytest.mark.parametrize("case", CASES)
def test_the_model_reads_the_article_decoded_and_without_page_furniture(
    server, private_fetching, fake_model, rss, make_feed, case
):
    body, content_type = CASES[case]
    server.respond("/a/1", body=body, headers={"Content-Type": content_type})
    server.respond(
        "/feed.xml",
        body=rss([{"guid": "1", "link": server.url("/a/1"), "title": "Ny iPhone"}]),
    )
    make_feed(url=server.url("/feed.xml"), language="sv")
    model = ChatModel.from_settings()
    ingest_run(model=model)
    model.close()

    prompt = fake_model.requests[0]["messages"][1]["content"]
    article = prompt.split("Artikel:\n", 1)[1]
    for sentence in ARTICLE:
        assert sentence in article, (case, article)
    for furniture in FURNITURE:
        assert furniture not in article, (case, furniture)
    assert "\ufffd" not in article
    assert "kakor" not in article
    assert Entry.objects.get().image_url == server.url("/bild.jpg")
