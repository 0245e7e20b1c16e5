#!/usr/bin/env bash
# One database backend's share of `make test`: `scripts/test_backend.sh sqlite|postgres`.
# The compliance, shared and client tests (clients/), then the news tests, each on pytest-xdist
# workers (WORKERS, 2 by default), then the browser tests (and on SQLite the docs' checks) in one
# process: their quick start or run-prod stack is shared by the tests of a module.
#
# Each test runs where it can find something (docs/testing.md): PostgreSQL + Redis, what
# production runs, takes every test but those marked `embedded_only`; SQLite takes those marked
# `every_backend` or `embedded_only`. ONLY_BACKEND=1 says SQLite is the only backend of the run
# (PostgreSQL or Redis not reachable on a developer's machine): then it takes every test.
#
# The Makefile runs both backends at once, so each has its own databases (on PostgreSQL
# test_$COMPLIANCE_DB and test_$NEWS_DB with each worker's suffix) and its own Redis databases:
# TEST_REDIS_URL's for the first worker, the next numbers for the others (tests/conftest.py).
set -euo pipefail
cd "$(dirname "$0")/.."

backend=$1
BIN=${VENV:-.venv}/bin
WORKERS=${WORKERS:-2}
: "${TEST_REDIS_URL:?the Redis database of the first worker}"
export TEST_REDIS_URL
if [ "$backend" = postgres ]; then
  : "${PG_URL:?the PostgreSQL server}"
  export COMPLIANCE_DATABASE_URL="$PG_URL/${COMPLIANCE_DB:-compliance}"
  export NEWS_DATABASE_URL="$PG_URL/${NEWS_DB:-news}"
  export REDIS_URL="$TEST_REDIS_URL"
  browser=(tests/browser/test_run_prod_browser.py)
  select=(-m "not embedded_only")
else
  unset COMPLIANCE_DATABASE_URL NEWS_DATABASE_URL REDIS_URL
  browser=(tests/browser/test_quickstart_browser.py tests/browser/test_editors_desk_browser.py
    tests/browser/test_reader_pages.py tests/docs)
  if [ "${ONLY_BACKEND:-0}" = 1 ]; then select=(); else select=(-m "every_backend or embedded_only"); fi
fi

# --dist loadscope: a module's tests stay on one worker, so a server a module shares among its
# tests starts once, not once per worker.
echo "== compliance on $backend"
DJANGO_SETTINGS_MODULE=compliance_site.settings "$BIN/pytest" -q -n "$WORKERS" --dist loadscope "${select[@]}" tests/compliance tests/shared tests/clients clients/compliance_sync/tests
echo "== news on $backend"
DJANGO_SETTINGS_MODULE=news_site.settings "$BIN/pytest" -q -n "$WORKERS" --dist loadscope "${select[@]}" tests/news
echo "== browsers and docs on $backend"
DJANGO_SETTINGS_MODULE=news_site.settings "$BIN/pytest" -q "${select[@]}" "${browser[@]}"
