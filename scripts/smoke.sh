#!/usr/bin/env bash
# `make smoke`: CI's check of the newest supported Python, in its own virtualenv (VENV). The
# quick start comes up and serves both services, then the HTTP API tests run on SQLite.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${VENV:-.venv-smoke}
folder=var/smoke
rm -rf "$folder" && mkdir -p "$folder"
port() { "$venv/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
news_port=$(port) compliance_port=$(port)

NEWS_PORT=$news_port COMPLIANCE_PORT=$compliance_port VENV=$venv VAR_DIR=$folder \
  ENV_FILE=$folder/.env setsid bash scripts/quickstart.sh >"$folder/quickstart.log" 2>&1 &
quickstart=$!
trap 'kill -INT -- -$quickstart 2>/dev/null || true; wait $quickstart 2>/dev/null || true' EXIT
for _ in $(seq 1 240); do
  grep -q "Quick start is running" "$folder/quickstart.log" && break
  kill -0 $quickstart 2>/dev/null || { cat "$folder/quickstart.log"; echo "smoke: the quick start stopped" >&2; exit 1; }
  sleep 1
done
grep -q "Quick start is running" "$folder/quickstart.log" || { cat "$folder/quickstart.log"; exit 1; }
key=$(grep '^COMPLIANCE_DEMO_API_KEY=' "$folder/.env" | cut -d= -f2)
curl -fsS "http://127.0.0.1:$news_port/api/v1/entries?per_page=1" >/dev/null
curl -fsS "http://127.0.0.1:$news_port/static/admin/css/base.css" >/dev/null
curl -fsS -H "Authorization: Bearer $key" "http://127.0.0.1:$compliance_port/api/v1/compliance/states/TX" >/dev/null
curl -fsS "http://127.0.0.1:$compliance_port/api/v1/compliance/docs" >/dev/null
# Semantic search on this Python too (no torch anywhere): the model answers, not keywords.
mode=$(curl -fsS "http://127.0.0.1:$news_port/api/v1/entries/search?q=vikbar%20iphone" |
  "$venv/bin/python" -c 'import json, sys; print(json.load(sys.stdin)["meta"]["mode"])')
[ "$mode" = semantic ] || { cat "$folder/quickstart.log"; echo "smoke: search answered in $mode mode, not semantic" >&2; exit 1; }
echo "smoke: semantic search answers (meta.mode: semantic)"
echo "smoke: the quick start serves both services on $("$venv/bin/python" -V)"

unset COMPLIANCE_DATABASE_URL NEWS_DATABASE_URL REDIS_URL
export SECRET_KEY=test-only-secret-key-not-for-production SECURE_SSL_REDIRECT=false ENV_FILE=
DJANGO_SETTINGS_MODULE=compliance_site.settings "$venv/bin/pytest" tests/compliance/api -q
DJANGO_SETTINGS_MODULE=news_site.settings "$venv/bin/pytest" tests/news/api -q
