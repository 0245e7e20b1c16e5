"""The ingest benchmark's database and settings (benchmarks/news_ingest_bench.py and
benchmarks/ingest_scale.py): a PostgreSQL database of its own, made fresh and migrated."""

import os
import subprocess
import sys
from pathlib import Path

import psycopg

REPO_ROOT = Path(__file__).resolve().parent.parent

PG = os.environ.get("BENCH_PG_URL", "postgres://postgres@127.0.0.1:5432")
DB_NAME = os.environ.get("BENCH_INGEST_DB", "news_ingest_bench")
ENV = {
    "NEWS_DATABASE_URL": f"{PG}/{DB_NAME}",
    "REDIS_URL": os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/5"),
    "SECRET_KEY": "benchmark-only-secret-key",
    "SECURE_SSL_REDIRECT": "false",
    "DEBUG": "false",
    "ALLOWED_HOSTS": "127.0.0.1,localhost",
    "LOG_LEVEL": "WARNING",
    # The generated feeds are served from this machine.
    "FETCH_ALLOW_PRIVATE_NETWORKS": "true",
    "NEWS_EMBEDDING_MODEL": "",
}


def django_setup() -> None:
    os.environ.update(ENV)
    for name in ("NEWS_LLM_BASE_URL", "NEWS_LLM_MODEL"):
        os.environ.pop(name, None)
    os.environ["DJANGO_SETTINGS_MODULE"] = "news_site.settings"
    import django

    django.setup()


def database_fresh() -> None:
    from django.core.cache import cache
    from django.db import connections

    # The benchmark's Redis database too: a clustering lock left by an interrupted run (or a
    # test on the same database) would make the next run skip clustering.
    cache.clear()
    connections.close_all()
    with psycopg.connect(f"{PG}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{DB_NAME}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{DB_NAME}"')
    subprocess.run(
        [sys.executable, "-m", "news_site", "migrate", "--noinput", "-v", "0"],
        cwd=REPO_ROOT,
        env={**os.environ, **ENV},
        check=True,
    )
