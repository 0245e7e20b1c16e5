#!/usr/bin/env bash
# `make run` after the install: the quick start in the foreground. Embedded SQLite, in-process
# caches, the demo data, both services on loopback with their static files (WhiteNoise), the
# task workers of both (news ingest, compliance webhooks) and their schedules, email into
# files. Ctrl-C stops everything.
#
# Generated settings (secret key, demo password, demo API key), made once, live in ENV_FILE
# (.env), which every `python -m news_site|compliance_site` command reads too. NEWS_PORT,
# COMPLIANCE_PORT, INGEST_EVERY_SECONDS, VAR_DIR and ENV_FILE may be set (the browser tests run
# a second copy).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${VENV:-.venv}/bin
news_port=${NEWS_PORT:-8000}
compliance_port=${COMPLIANCE_PORT:-8001}
ingest_every=${INGEST_EVERY_SECONDS:-60}
export VAR_DIR=$(realpath -m "${VAR_DIR:-var}")
export ENV_FILE=$(realpath -m "${ENV_FILE:-.env}")
mkdir -p "$VAR_DIR"

step() { printf '==> %s\n' "$*"; }
# Taken ports are refused before anything starts (`make run` checked already; others call this
# script directly).
"$bin/python" scripts/ports_free.py NEWS_PORT="$news_port" COMPLIANCE_PORT="$compliance_port"

# The address of this start's news service, for the links in the editors' notice mails.
"$bin/python" scripts/quickstart_env.py "$ENV_FILE" --var-dir "$VAR_DIR" \
  --set "NEWS_PUBLIC_URL=http://127.0.0.1:$news_port"
setting() { "$bin/python" -c 'import sys; from dotenv import dotenv_values; print(dotenv_values(sys.argv[1]).get(sys.argv[2]) or "")' "$ENV_FILE" "$1"; }

pids=()
stop() {
  trap - INT TERM EXIT
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  wait || true
}
trap stop INT TERM EXIT

# Each service's database: migrations, the demo data, the demo admin account (with the
# password from .env), one process per service (scripts/quickstart_prepare.py). The two are
# apart (a SQLite file each), so they are prepared side by side, and each service starts as
# soon as its database is ready (the compliance one usually first).
key_file=$VAR_DIR/compliance_demo_key
rm -f "$key_file"
"$bin/python" scripts/quickstart_prepare.py compliance_site --key-file "$key_file" &
compliance_ready=$!
"$bin/python" scripts/quickstart_prepare.py news_site &
news_ready=$!
wait $compliance_ready || { echo "quick start: preparing the compliance service failed" >&2; exit 1; }
# The demo key as the loader confirmed it: .env's COMPLIANCE_DEMO_API_KEY, the same at every
# start.
demo_key=$(cat "$key_file")
rm -f "$key_file"
step "compliance: starting on 127.0.0.1:$compliance_port"
"$bin/gunicorn" compliance_site.wsgi --bind "127.0.0.1:$compliance_port" --workers 1 \
  --threads 4 --log-level warning &
pids+=($!)
wait $news_ready || { echo "quick start: preparing the news service failed" >&2; exit 1; }
step "news: starting on 127.0.0.1:$news_port"
"$bin/gunicorn" news_site.asgi:application -k news_site.server.NewsWorker \
  --bind "127.0.0.1:$news_port" --workers 1 --log-level warning &
pids+=($!)
# The compliance task worker sends webhook deliveries; the sweep every minute brings retries
# back when they fall due (compliance-webhooks.timer in production).
"$bin/python" -m compliance_site db_worker --no-reload --interval 2 &
pids+=($!)
( while true; do
    "$bin/python" -m compliance_site webhooks_sweep --enqueue >/dev/null || true
    sleep 60
  done ) &
pids+=($!)

"$bin/python" - "$news_port" "$compliance_port" <<'PY'
import sys, time, httpx
for _ in range(240):
    try:
        if all(httpx.get(f"http://127.0.0.1:{port}/healthz").status_code == 200 for port in sys.argv[1:]):
            break
    except httpx.HTTPError:
        pass
    time.sleep(0.5)
else:
    sys.exit("quick start: the services did not come up; see the messages above")
PY
# The task worker runs queued ingest runs (fetch, summaries, embeddings, stories). It and the
# schedule start once both services answer, so as not to slow their start.
"$bin/python" -m news_site db_worker --no-reload --interval 2 &
pids+=($!)
# The schedule: what the systemd timer does in production (every five minutes there), more
# often here so that a feed added in admin shows its entries within a minute.
( while true; do
    "$bin/python" -m news_site ingest --enqueue >/dev/null || true
    sleep "$ingest_every"
  done ) &
pids+=($!)

news=http://127.0.0.1:$news_port compliance=http://127.0.0.1:$compliance_port
cat <<BANNER

  Quick start is running (Ctrl-C stops it). Settings: $ENV_FILE
    News          $news/            API reference $news/api/v1/docs
    Compliance    $compliance/api/v1/compliance/docs   API reference (its data calls need the key below)
    Admin         $news/admin/  and  $compliance/admin/
                  user $(setting DEMO_ADMIN_USERNAME)  password $(setting DEMO_ADMIN_PASSWORD)
    Demo API key  curl -H 'Authorization: Bearer $demo_key' $compliance/api/v1/compliance/states/CA
    Login codes   email login codes are written to files:  tail -n 20 $VAR_DIR/mail/*
    Android       the emulator reaches the news API at http://10.0.2.2:$news_port/api/v1/
    Ingest        feeds are fetched every ${ingest_every}s by the task worker
    Webhooks      compliance webhooks are sent by the compliance task worker

BANNER
# Everything stops when any one of them does.
wait -n
