"""Search quality on the demo data: recall@10 of semantic, keyword and automatic search over
the labelled queries in news_search_queries.yaml (Swedish and English).

    python benchmarks/news_search_quality.py            # a scratch SQLite database
    NEWS_DATABASE_URL=postgres://.../scratch python benchmarks/news_search_quality.py

The database is migrated, the demo loaded (offline) and the relevant entries embedded first.
"""

import os
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "news_site.settings")
os.environ.setdefault("SECRET_KEY", "search-quality-only")
os.environ.setdefault("SECURE_SSL_REDIRECT", "false")
if not os.environ.get("NEWS_DATABASE_URL"):
    scratch = Path(tempfile.mkdtemp()) / "news_search_quality.sqlite3"
    os.environ["NEWS_DATABASE_URL"] = f"sqlite:///{scratch}"

import django  # noqa: E402

from benchmarks.results import Figure, record  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

from news_site.search.embeddings import embeddings_available  # noqa: E402
from news_site.search.selectors import (  # noqa: E402
    entries_keyword_search,
    entries_search,
    entries_semantic_search,
)
from news_site.search.services import entries_embed  # noqa: E402

K = 10


def recall(found_titles: list[str], relevant: list[str]) -> float:
    return len(set(found_titles[:K]) & set(relevant)) / len(relevant)


def main() -> None:
    queries = yaml.safe_load((Path(__file__).parent / "news_search_queries.yaml").read_text())
    call_command("migrate", verbosity=0)
    call_command("load_demo", verbosity=0)
    embedded = entries_embed()
    modes = {
        "keyword": lambda q: entries_keyword_search(query=q, limit=K),
        "auto": lambda q: entries_search(query=q, limit=K)[0],
    }
    if embeddings_available():
        modes["semantic"] = lambda q: entries_semantic_search(query=q, limit=K)
    totals = dict.fromkeys(modes, 0.0)
    print(f"database: {connection.vendor}; entries embedded: {embedded}; queries: {len(queries)}")
    print(f"{'query':40} " + " ".join(f"{mode:>8}" for mode in modes))
    for item in queries:
        row = []
        for mode, search in modes.items():
            value = recall([entry.title for entry in search(item["query"])], item["relevant"])
            totals[mode] += value
            row.append(f"{value:8.2f}")
        print(f"{item['query'][:40]:40} " + " ".join(row))
    print("mean recall@10: " + ", ".join(f"{m} {t / len(queries):.3f}" for m, t in totals.items()))
    record(
        *(
            Figure(
                "news search quality",
                f"recall@10, {mode} ({connection.vendor}, {len(queries)} queries)",
                f"{total / len(queries):.3f}",
                target="measured",
            )
            for mode, total in totals.items()
        )
    )
    if not embeddings_available():
        print("semantic: not available (install the 'semantic' extra)")


if __name__ == "__main__":
    main()
