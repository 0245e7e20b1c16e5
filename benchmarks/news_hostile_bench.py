"""What the worst hostile feed item costs an ingest run, per trigger (target < 1 s each).

For each trigger of issue #11 a feed document holds the hostile item beside a good one; the
feeds step (`feed_refresh`: parse, clean, store) runs on it and on the same document without
the hostile item, and the difference is the item's cost. Documents are handed to the step by a
fetcher that answers from memory, so the figure is our parsing and storing, not the network.

Usage: python benchmarks/news_hostile_bench.py [--database-url URL]
Without --database-url it uses a throw-away SQLite file; a URL's database is emptied first.
"""

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from benchmarks.results import Figure, record  # noqa: E402

TARGET_SECONDS = 1.0
MB = 1024 * 1024


def _item(n: int, title: str, link: str, description: str = "Apple visar iPhone.") -> str:
    return (
        f'<item><guid isPermaLink="false">{n}</guid><title>{title}</title><link>{link}</link>'
        f"<description>{description}</description></item>"
    )


def _document(items: list[str]) -> bytes:
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0" '
        'xmlns:itunes="http://www.itunes.com/dtds/podcast-1.0.dtd"><channel><title>B</title>'
        f"<link>https://b.example/</link>{''.join(items)}</channel></rss>"
    ).encode()


def _cdata(piece: str, size: int) -> str:
    return "<![CDATA[" + piece * (size // len(piece)) + "]]>"


def _triggers() -> dict[str, str]:
    audio = '<enclosure url="https://b.example/a.mp3" type="audio/mpeg" length="1"/>'
    return {
        # Each is 1 MB of the feed document: raw markup in CDATA, or escaped markup.
        "1 MB of <!-- (CDATA)": _item(1, "Apple", "https://b.example/1", _cdata("<!--", MB)),
        "1 MB of <!-- (escaped)": _item(
            11, "Apple", "https://b.example/11", "&lt;!--" * (MB // len("&lt;!--"))
        ),
        '1 MB of <a href="': _item(2, "Apple", "https://b.example/2", _cdata('<a href="', MB)),
        "1 MB of <![CDATA[ (escaped)": _item(
            3, "Apple", "https://b.example/3", "&lt;![CDATA[" * (MB // len("&lt;![CDATA["))
        ),
        "80 KB of 1,1,1": _item(4, "Apple", "https://b.example/4", "1," * 40_000),
        "year 0000 date": _item(5, "Apple", "https://b.example/5")[:-7]
        + "<pubDate>Sat, 01 Jan 0000 00:00:00 +0000</pubDate></item>",
        "duration 1e400": _item(6, "Apple", "https://b.example/6")[:-7]
        + f"{audio}<itunes:duration>1e400</itunes:duration></item>",
        "NUL and controls in title": _item(
            7, "Apple &#0;&#127;&#133;&#65534;", "https://b.example/7"
        ),
        "link too long once normalised": _item(8, "Apple", "https://b.example/" + "a " * 1000),
        "1 MB of nested tags": _item(9, "Apple", "https://b.example/9", _cdata("<b>", MB)),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", default="")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["NEWS_DATABASE_URL"] = args.database_url or f"sqlite:///{tmp}/hostile.sqlite3"
        os.environ.setdefault("SECRET_KEY", "benchmark-only-secret-key")
        os.environ["DJANGO_SETTINGS_MODULE"] = "news_site.settings"
        os.environ.pop("REDIS_URL", None)
        import django

        django.setup()
        import httpx
        from django.core.management import call_command

        from news_site.news.feeds import feed_refresh
        from news_site.news.models import Feed
        from shared.fetch import FetchResult

        if args.database_url:
            call_command("flush", "--noinput", verbosity=0)
        call_command("migrate", "--noinput", verbosity=0)

        def refresh_seconds(body: bytes, n: int) -> float:
            feed = Feed.objects.create(title=f"f{n}", url=f"https://b.example/feed{n}.xml")

            def fetcher(url: str, *, headers: dict[str, str], max_bytes: int | None = None):
                return FetchResult(
                    url=url,
                    status_code=200,
                    headers=httpx.Headers({"Content-Type": "application/rss+xml"}),
                    body=body,
                    permanent_redirect_url=None,
                )

            started = time.perf_counter()
            outcome = feed_refresh(feed=feed, fetcher=fetcher).outcome
            elapsed = time.perf_counter() - started
            assert outcome == "ok", (n, outcome, Feed.objects.get(pk=feed.pk).last_error)
            return elapsed

        worst = 0.0
        figures = []
        for n, (name, hostile) in enumerate(_triggers().items()):
            good = _item(1000 + n, "Apple bra", f"https://good.example/{n}")
            baseline = refresh_seconds(_document([good]), 2 * n)
            with_item = refresh_seconds(
                _document([hostile, good.replace(f"/{n}<", f"/{n}b<")]), 2 * n + 1
            )
            cost = max(0.0, with_item - baseline)
            worst = max(worst, cost)
            print(f"{name:<32} {cost * 1000:8.1f} ms")
            figures.append(
                Figure(
                    "news_hostile_bench",
                    f"hostile item cost: {name}",
                    f"{cost * 1000:.1f} ms",
                    target=f"< {TARGET_SECONDS:.0f} s",
                    met=cost < TARGET_SECONDS,
                )
            )
        print(f"worst hostile item: {worst * 1000:.1f} ms (target < {TARGET_SECONDS:.0f} s)")
        record(*figures)
        return 0 if worst < TARGET_SECONDS else 1


if __name__ == "__main__":
    sys.exit(main())
