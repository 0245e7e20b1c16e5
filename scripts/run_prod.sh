#!/usr/bin/env bash
# `make run-prod`: both services as deployed, on loopback, in the foreground. PostgreSQL and
# Redis of this machine, gunicorn from deploy/gunicorn/*.py, the news task worker, and nginx
# from deploy/nginx/*.conf rendered for loopback (the shipped files with their production
# addresses and paths substituted) with a self-signed certificate. Ctrl-C stops everything.
#
# RUN_PROD_* variables choose databases, Redis, ports and the folder of nginx's files (the
# test suite runs a second copy beside an operator's); PG_URL is the server, as in the Makefile.
#
# `scripts/run_prod.sh createsuperuser [news|compliance|both] [ARGS...]` (make run-prod-admin)
# creates an admin account in run-prod's databases instead (Django's createsuperuser with these
# settings; ARGS such as `--noinput --username U --email E` with DJANGO_SUPERUSER_PASSWORD set
# make it without questions), and starts nothing.
set -euo pipefail
mode=serve
if [ "${1:-}" = createsuperuser ]; then
  mode=admin services=${2:-both}
  shift $(($# < 2 ? $# : 2))
  case $services in
    news | compliance) services=${services}_site ;;
    both) services="news_site compliance_site" ;;
    *) echo "run-prod: createsuperuser takes news, compliance or both, not '$services'" >&2; exit 2 ;;
  esac
fi
cd "$(dirname "$0")/.."
repo=$PWD
bin=$repo/.venv/bin

pg_url=${PG_URL:-postgres://postgres@127.0.0.1:5432}
news_db=${RUN_PROD_NEWS_DB:-news_prod}
compliance_db=${RUN_PROD_COMPLIANCE_DB:-compliance_prod}
redis_url=${RUN_PROD_REDIS_URL:-redis://127.0.0.1:6379/2}
news_https=${RUN_PROD_NEWS_HTTPS_PORT:-8443}
compliance_https=${RUN_PROD_COMPLIANCE_HTTPS_PORT:-8444}
news_http=${RUN_PROD_NEWS_HTTP_PORT:-8080}
compliance_http=${RUN_PROD_COMPLIANCE_HTTP_PORT:-8081}
news_app=${RUN_PROD_NEWS_APP_PORT:-8010}
compliance_app=${RUN_PROD_COMPLIANCE_APP_PORT:-8011}
run_dir=$(realpath -m "${RUN_PROD_DIR:-var/run-prod}")
# off: nginx's per-address limits are left out (a benchmark from one address stands in for
# many clients that way; benchmarks/burst_bench.py).
edge_limits=${RUN_PROD_EDGE_LIMITS:-on}

fail() { echo "run-prod: $*" >&2; exit 1; }

if [ "$mode" = serve ]; then
  nginx=$(command -v nginx || command -v /usr/sbin/nginx) || fail "nginx is not installed"
  command -v openssl >/dev/null || fail "openssl is not installed"
fi
"$bin/python" scripts/services_ready.py "$pg_url/postgres" "$redis_url" ||
  fail "PostgreSQL ($pg_url) and Redis ($redis_url) must answer"

export SECRET_KEY=${SECRET_KEY:-$(cat var/secret_key)}
export ALLOWED_HOSTS=127.0.0.1,localhost
export TRUSTED_PROXIES=127.0.0.1
export REDIS_URL=$redis_url
export NEWS_DATABASE_URL=$pg_url/$news_db
export COMPLIANCE_DATABASE_URL=$pg_url/$compliance_db
export NEWS_BIND=127.0.0.1:$news_app
export COMPLIANCE_BIND=127.0.0.1:$compliance_app
# HTTPS is enforced as in production, but without HSTS: browsers would pin it for every
# service on localhost, `make run`'s plain HTTP included.
export SECURE_SSL_REDIRECT=true
export SECURE_HSTS_SECONDS=0
# Each entry point (python -m news_site, gunicorn's app) names its own settings module.
unset DEBUG DJANGO_SETTINGS_MODULE

"$bin/python" - "$pg_url/postgres" "$news_db" "$compliance_db" <<'EOF'
import sys

import psycopg
from psycopg import sql

url, *names = sys.argv[1:]
with psycopg.connect(url, autocommit=True) as connection:
    for name in names:
        found = connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name])
        if found.fetchone() is None:
            connection.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
            print(f"created database {name}")
EOF

for project in news_site compliance_site; do
  "$bin/python" -m $project migrate --noinput -v 0
done
if [ "$mode" = admin ]; then
  for project in $services; do
    echo "run-prod: an admin account for ${project%_site} (database $(
      [ $project = news_site ] && echo "$NEWS_DATABASE_URL" || echo "$COMPLIANCE_DATABASE_URL"))"
    "$bin/python" -m $project createsuperuser "$@"
  done
  exit 0
fi
for project in news_site compliance_site; do
  "$bin/python" -m $project collectstatic --noinput -v 0
done
# The news admin's Swedish catalogue, as the deploy's news-migrate unit compiles it.
"$bin/python" -m news_site compile_catalogues -v 0
# The demo data, once: a database that already has data keeps it.
if "$bin/python" -m compliance_site shell -v 0 -c \
  'from compliance_site.records.models import ResourceVersion as M; exit(M.objects.exists())'; then
  "$bin/python" -m compliance_site load_demo
fi
if "$bin/python" -m news_site shell -v 0 -c \
  'from news_site.news.models import Feed as M; exit(M.objects.exists())'; then
  "$bin/python" -m news_site load_demo
fi

# TLS: a self-signed certificate for localhost and 127.0.0.1, made once.
mkdir -p -m 0755 "$run_dir"
cert=$run_dir/localhost.pem key=$run_dir/localhost.key
if [ ! -s "$cert" ]; then
  openssl req -x509 -newkey rsa:2048 -nodes -days 365 -subj /CN=localhost \
    -addext subjectAltName=DNS:localhost,IP:127.0.0.1 -keyout "$key" -out "$cert" 2>/dev/null
fi

# The shipped site configs with the lines an operator sets swapped for loopback values.
render() {  # render SITE APP_PORT HTTP_PORT HTTPS_PORT
  local site=$1 source=deploy/nginx/$1.conf target=$run_dir/$1.conf
  sed -E \
    -e "s#^(\s*)listen 80;#\1listen 127.0.0.1:$3;#" \
    -e "s#^(\s*)listen 443 ssl http2;#\1listen 127.0.0.1:$4 ssl http2;#" \
    -e "s#return 301 https://\\\$host\\\$request_uri;#return 301 https://\$host:$4\$request_uri;#" \
    -e "s#server 127\.0\.0\.1:[0-9]+\b#server 127.0.0.1:$2#" \
    -e "s#ssl_certificate(\s+)\S+;#ssl_certificate\1$cert;#" \
    -e "s#ssl_certificate_key(\s+)\S+;#ssl_certificate_key\1$key;#" \
    -e "s#proxy_cache_path \S+#proxy_cache_path $run_dir/cache/$site#" \
    -e "s#alias /srv/platform/#alias $repo/#" \
    -e "s#access_log /var/log/nginx/#access_log $run_dir/#" \
    "$source" >"$target"
  if [ "$edge_limits" = off ]; then
    sed -i -E '/^\s*limit_(req|conn) /d' "$target"
  fi
  # A production address or path left over means the shipped file changed shape.
  if grep -v '^\s*#' "$target" |
    grep -E '/etc/|/var/(cache|log)/|/srv/|listen (80|443)[ ;]|:800[01][ ;]|https://\$host\$'; then
    fail "$source has lines scripts/run_prod.sh does not render for loopback"
  fi
}
render news "$news_app" "$news_http" "$news_https"
render compliance "$compliance_app" "$compliance_http" "$compliance_https"

# The http {} block a distribution's nginx.conf would provide, around the two sites.
conf_dir=$(dirname "$("$nginx" -V 2>&1 | grep -o -- '--conf-path=[^ ]*' | cut -d= -f2)")
cat >"$run_dir/nginx.conf" <<EOF
daemon off;
worker_processes 2;
pid $run_dir/nginx.pid;
error_log $run_dir/error.log warn;
events { worker_connections 512; }
http {
    include $conf_dir/mime.types;
    default_type application/octet-stream;
    sendfile on;
    client_body_temp_path $run_dir/tmp/body;
    proxy_temp_path $run_dir/tmp/proxy;
    fastcgi_temp_path $run_dir/tmp/fastcgi;
    uwsgi_temp_path $run_dir/tmp/uwsgi;
    scgi_temp_path $run_dir/tmp/scgi;
    include $run_dir/news.conf;
    include $run_dir/compliance.conf;
}
EOF
mkdir -p -m 0755 "$run_dir/tmp" "$run_dir/cache"
"$nginx" -t -q -c "$run_dir/nginx.conf" -p "$run_dir" -e "$run_dir/error.log"

pids=()
stop() {
  trap - INT TERM EXIT
  echo "run-prod: stopping"
  # gunicorn and the task worker finish what they are doing on TERM; nginx on QUIT.
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  kill -QUIT "$nginx_pid" 2>/dev/null || true
  wait
}
trap stop INT TERM EXIT

"$bin/gunicorn" -c deploy/gunicorn/news.py &
pids+=($!)
"$bin/gunicorn" -c deploy/gunicorn/compliance.py &
pids+=($!)
"$bin/python" -m news_site db_worker --no-reload --interval 2 &
pids+=($!)
"$bin/python" -m compliance_site db_worker --no-reload --interval 2 &
pids+=($!)
"$nginx" -c "$run_dir/nginx.conf" -p "$run_dir" -e "$run_dir/error.log" &
nginx_pid=$!

admins=$("$bin/python" -m news_site shell -v 0 -c \
  'from django.contrib.auth import get_user_model as u; print(u().objects.filter(is_superuser=True).count())')
cat <<BANNER

  run-prod is running (Ctrl-C stops it). Certificate (self-signed): $cert
    News          https://localhost:$news_https/        admin https://localhost:$news_https/admin/
    Compliance    https://localhost:$compliance_https/api/v1/compliance/review_flags
                  admin https://localhost:$compliance_https/admin/
    Databases     $NEWS_DATABASE_URL and $COMPLIANCE_DATABASE_URL (not the quick start's SQLite)
    Admin account $admins superuser(s) in the news database. To create one in run-prod's
                  databases, in another terminal:   make run-prod-admin
                  (asks for a username, email and password, for news and then compliance;
                  SERVICE=news or SERVICE=compliance for one of them)

BANNER
# Everything stops when any one of them does.
wait -n
