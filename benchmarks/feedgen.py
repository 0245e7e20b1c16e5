"""Generated RSS feeds for the ingest benchmarks, and a local HTTP server for them.

40 sources of 50 items each by default, in Swedish and English, about consumer electronics:
most items are about the vendor (so they get summaries, embeddings and stories), the rest about
other brands. The same events are covered by several sources over several days, as real news
is (from one template per kind of event and language, told apart by who reported them and
where). `advance` puts N new items on top of every feed (dropping the oldest),
which is the "5 new per feed" pass.

Two corpora: by default a wire story is carried word for word by several sources (the repeated
corpus: a run embeds each distinct text once); `distinct=True` gives every item a text of its
own, as real sources write their own copy of a story (the model then runs for every item).

The server answers conditional requests the way real sites do: a strong ETag and a
Last-Modified per document, 304 to a matching If-None-Match or If-Modified-Since.
"""

import hashlib
import random
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime, parsedate_to_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from xml.sax.saxutils import escape

PRODUCTS = [
    ("iPhone 18 Pro", "A20 Pro"),
    ("iPhone 18", "A20"),
    ("iPhone 17e", "A19"),
    ("MacBook Air M5", "M5"),
    ("MacBook Pro M5 Max", "M5 Max"),
    ("iPad mini 8", "A19 Pro"),
    ("iPad Pro M6", "M6"),
    ("Apple Watch Series 11", "S11"),
    ("Apple Watch Ultra 3", "S11"),
    ("AirPods Pro 3", "H3"),
    ("Vision Pro 2", "M6"),
    ("Mac Studio M5 Ultra", "M5 Ultra"),
    ("HomePod mini 2", "S9"),
    ("Apple TV 4K", "A18"),
]
SOFTWARE = ["iOS 26.2", "macOS 26.2", "watchOS 12.1", "iPadOS 26.2", "visionOS 3.1", "tvOS 26.1"]
OTHER = ["Pixel 10 Pro", "Galaxy S26 Ultra", "Xperia 1 VII", "OnePlus 14", "Surface Laptop 8"]
# What tells two events about one product apart: who reported it, and where.
SOURCES = [
    "Bloomberg",
    "Kuo",
    "Gurman",
    "Counterpoint",
    "IDC",
    "DigiTimes",
    "Nikkei",
    "Reuters",
    "Elgiganten",
    "Netonnet",
    "Webhallen",
    "Inet",
    "Best Buy",
    "Amazon",
    "Foxconn",
    "TSMC",
]
PLACES = [
    "Stockholm",
    "Göteborg",
    "Malmö",
    "Berlin",
    "London",
    "Tokyo",
    "Shenzhen",
    "Austin",
    "Cupertino",
    "Paris",
    "Oslo",
    "Helsinki",
    "Seoul",
    "Taipei",
    "Bangalore",
    "Dublin",
]

EN_EVENTS = [
    (
        "{p} price cut at major retailers",
        "Several retailers have cut the price of the {p}. "
        "The {p} with the {c} chip now sells for about {n} dollars less than at launch, "
        "and stock is said to be good in most regions.",
    ),
    (
        "{p} review: battery life and the {c} chip",
        "We spent a week with the {p}. The {c} chip "
        "is fast and efficient, battery life lasts {n} hours in our video test, and the display "
        "is brighter than before, though the price remains high.",
    ),
    (
        "{p} shipments delayed by supply problems",
        "Shipments of the {p} slip by several weeks "
        "according to supply chain sources. Production of the {c} chip is said to run {n} percent "
        "below plan at the factory.",
    ),
    (
        "{s} released with fixes for {p} owners",
        "Apple has released {s}. The update fixes a "
        "battery drain on the {p}, closes {n} security holes and adds a few small features to "
        "the Settings app.",
    ),
    (
        "{p} gets a new colour and more storage",
        "A new colour and a {n} GB storage option are "
        "coming to the {p}. Orders open on Friday, and the {c} chip is unchanged.",
    ),
    (
        "Leak shows the design of the next {p}",
        "Images said to show the next {p} reveal a "
        "thinner frame and a new camera layout. The source claims the {c} successor is built on "
        "a {n} nanometre process.",
    ),
]
SV_EVENTS = [
    (
        "{p} sänks i pris hos svenska butiker",
        "Flera svenska butiker har sänkt priset på {p}. "
        "Modellen med {c}-kretsen kostar nu omkring {n} kronor mindre än vid lanseringen.",
    ),
    (
        "Test: {p} imponerar med batteritiden",
        "Vi har testat {p} i en vecka. {c}-kretsen är "
        "snabb och batteriet räcker {n} timmar i vårt videotest, men priset är fortfarande högt.",
    ),
    (
        "{p} försenas av problem i produktionen",
        "Leveranserna av {p} försenas med flera veckor "
        "enligt källor i leverantörskedjan. Tillverkningen av {c} ligger {n} procent efter plan.",
    ),
    (
        "{s} är här och rättar fel i {p}",
        "Apple har släppt {s}. Uppdateringen rättar ett fel som "
        "tömde batteriet i {p}, täpper till {n} säkerhetshål och lägger till nya funktioner.",
    ),
    (
        "{p} får ny färg och mer lagring",
        "En ny färg och {n} GB lagring kommer till {p}. "
        "Beställningarna öppnar på fredag och {c}-kretsen är densamma som tidigare.",
    ),
    (
        "Läcka visar nästa {p}",
        "Bilder som sägs visa nästa {p} avslöjar en tunnare ram och en ny "
        "kameramodul. Enligt källan tillverkas efterträdaren till {c} med {n} nanometer.",
    ),
]
OTHER_EVENTS = [
    (
        "{o} review: a strong rival",
        "The {o} has a bright screen and a good camera. Battery life "
        "reaches {n} hours and the price is competitive.",
    ),
    ("{o} sjunker i pris", "Priset på {o} har sänkts med {n} kronor hos flera butiker."),
]


@dataclass
class FeedSet:
    """`feeds` documents of `items` items; `advance` adds new ones on top."""

    feeds: int = 40
    items: int = 50
    seed: int = 13
    # Every item's text its own (a sentence of its source's) instead of a shared wire text.
    distinct: bool = False
    now: datetime = field(default_factory=lambda: datetime.now(UTC).replace(microsecond=0))
    _items: list[list[dict]] = field(default_factory=list)
    _serial: int = 0
    _documents: dict[str, tuple[bytes, str, str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._random = random.Random(self.seed)
        # Its own generator, so the repeated corpus stays what it was.
        self._own_words = random.Random(self.seed + 1)
        # Events several sources cover, spread over the last week.
        self._events = [self._event() for _ in range(self.feeds * self.items // 3)]
        self._items = [[] for _ in range(self.feeds)]
        for feed in range(self.feeds):
            for _ in range(self.items):
                self._items[feed].append(self._item(feed, self.now - self._age()))
            self._items[feed].sort(key=lambda item: item["published"], reverse=True)
            self._render(feed)

    def path(self, feed: int) -> str:
        return f"/feeds/source-{feed:02d}.xml"

    def paths(self) -> list[str]:
        return [self.path(feed) for feed in range(self.feeds)]

    def language(self, feed: int) -> str:
        return "sv" if feed % 3 == 0 else "en"

    def advance(self, new_per_feed: int) -> None:
        """`new_per_feed` new items on top of every feed, the oldest as many dropped."""
        self.now += timedelta(minutes=30)
        for feed in range(self.feeds):
            fresh = [self._item(feed, self.now - timedelta(minutes=i)) for i in range(new_per_feed)]
            self._items[feed] = (fresh + self._items[feed])[: self.items]
            self._render(feed)

    def document(self, path: str) -> tuple[bytes, str, str] | None:
        """(body, ETag, Last-Modified) of a feed."""
        return self._documents.get(path)

    def _age(self) -> timedelta:
        return timedelta(minutes=self._random.randint(30, 7 * 24 * 60))

    def _event(self) -> dict:
        r = self._random
        kind = r.random()
        product, chip = r.choice(PRODUCTS)
        return {
            "vendor": kind < 0.82,
            "index": r.randrange(len(EN_EVENTS)),
            "p": product,
            "c": chip,
            "s": r.choice(SOFTWARE),
            "o": r.choice(OTHER),
            "n": r.randint(2, 900),
            "who": r.choice(SOURCES),
            "where": r.choice(PLACES),
        }

    def _item(self, feed: int, published: datetime) -> dict:
        self._serial += 1
        event = self._random.choice(self._events)
        swedish = self.language(feed) == "sv"
        if event["vendor"]:
            title, text = (SV_EVENTS if swedish else EN_EVENTS)[event["index"]]
        else:
            title, text = OTHER_EVENTS[1 if swedish else 0]
        values = {key: event[key] for key in ("p", "c", "s", "o", "n")}
        where = f"{event['who']}, {event['where']}"
        lead = f"Enligt {where}: " if swedish else f"According to {where}: "
        body = lead + text.format(**values)
        if self.distinct:
            body += " " + self._own_sentence(feed, swedish=swedish)
        return {
            "guid": f"bench-{feed:02d}-{self._serial:06d}",
            "title": f"{title.format(**values)} ({event['who']})",
            "text": body,
            "published": published,
            "link": f"https://source-{feed:02d}.example/{self._serial}",
        }

    def _own_sentence(self, feed: int, *, swedish: bool) -> str:
        """What one source adds to a story in its own words: a sentence no other item has."""
        r = self._own_words
        place, other = r.choice(PLACES), r.choice(PLACES)
        if swedish:
            return (
                f"Källa {feed:02d} noterar att intresset i {place} var {r.randint(2, 99)} procent "
                f"högre än i {other} under vecka {r.randint(1, 52)} (notis {self._serial})."
            )
        return (
            f"Source {feed:02d} notes that interest in {place} ran {r.randint(2, 99)} percent "
            f"above {other} in week {r.randint(1, 52)} (note {self._serial})."
        )

    def _render(self, feed: int) -> None:
        items = "".join(
            "<item>"
            f"<title>{escape(item['title'])}</title>"
            f"<link>{escape(item['link'])}</link>"
            f'<guid isPermaLink="false">{item["guid"]}</guid>'
            f"<pubDate>{format_datetime(item['published'])}</pubDate>"
            f"<description>{escape(item['text'])}</description>"
            "</item>"
            for item in self._items[feed]
        )
        body = (
            '<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel>'
            f"<title>Source {feed:02d}</title><link>https://source-{feed:02d}.example/</link>"
            f"<language>{self.language(feed)}</language><description>Bench</description>"
            f"{items}</channel></rss>"
        ).encode()
        etag = '"' + hashlib.sha256(body).hexdigest()[:32] + '"'
        self._documents[self.path(feed)] = (body, etag, format_datetime(self.now, usegmt=True))


class FeedServer:
    """A threaded HTTP server for a FeedSet, in this process, on (host, port)."""

    def __init__(
        self,
        feeds: FeedSet,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        latency: dict[str, float] | None = None,
    ) -> None:
        self.feeds = feeds
        self.requests: list[tuple[str, int]] = []
        # Seconds a path's answer is held (a remote source's latency), and when each request
        # arrived and was answered (time.monotonic()).
        self.latency = latency or {}
        self.timings: list[tuple[float, float]] = []
        handler = self._handler()
        self._server = ThreadingHTTPServer((host, port), handler)
        self._server.daemon_threads = True
        self.host, self.port = self._server.server_address[:2]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def url(self, path: str) -> str:
        port = "" if self.port == 80 else f":{self.port}"
        return f"http://{self.host}{port}{path}"

    def start(self) -> "FeedServer":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def statuses(self) -> dict[int, int]:
        counts: dict[int, int] = {}
        for _, status in self.requests:
            counts[status] = counts.get(status, 0) + 1
        return counts

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:
                arrived = time.monotonic()
                if self.path in server.latency:
                    time.sleep(server.latency[self.path])
                try:
                    self._get()
                finally:
                    server.timings.append((arrived, time.monotonic()))

            def _get(self) -> None:
                found = server.feeds.document(self.path)
                if found is None:
                    self._answer(404, b"not found", {})
                    return
                body, etag, modified = found
                headers = {"ETag": etag, "Last-Modified": modified}
                if self._not_modified(etag, modified):
                    self._answer(304, b"", headers)
                else:
                    headers["Content-Type"] = "application/rss+xml; charset=utf-8"
                    self._answer(200, body, headers)

            def _not_modified(self, etag: str, modified: str) -> bool:
                match = self.headers.get("If-None-Match")
                if match is not None:
                    return etag in [tag.strip() for tag in match.split(",")]
                since = self.headers.get("If-Modified-Since")
                if since:
                    try:
                        return parsedate_to_datetime(modified) <= parsedate_to_datetime(since)
                    except (TypeError, ValueError):
                        return False
                return False

            def _answer(self, status: int, body: bytes, headers: dict[str, str]) -> None:
                server.requests.append((self.path, status))
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        return Handler
