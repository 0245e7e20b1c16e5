# gunicorn settings for the compliance service: `gunicorn -c deploy/gunicorn/compliance.py`.
# The application reads its settings from the environment (deploy/env/compliance.env.example);
# COMPLIANCE_BIND and WEB_CONCURRENCY set the address and the number of workers.
import multiprocessing
import os

# child_exit, on_exit and on_starting are server hooks: the workers share one Prometheus
# metrics directory (shared/gunicorn_hooks.py).
from shared.gunicorn_hooks import child_exit, gunicorn_logconfig, on_exit, on_starting  # noqa: F401

wsgi_app = "compliance_site.wsgi:application"
bind = os.environ.get("COMPLIANCE_BIND", "127.0.0.1:8001")
workers = int(os.environ.get("WEB_CONCURRENCY", multiprocessing.cpu_count() * 2))
worker_class = "sync"
# A sync worker serves one request at a time on one thread, so it needs one PostgreSQL
# connection; the second covers a connection being replaced after an error. nginx holds the
# queue in front of the workers short (max_conns in deploy/nginx/compliance.conf). The budget
# of both services together: docs/operators-capacity.md. The workers inherit these defaults.
os.environ.setdefault("DB_POOL_MAX_SIZE", "2")
os.environ.setdefault("DB_POOL_MIN_SIZE", "1")
# Requests are short; a stuck worker is recycled rather than left holding a slot.
timeout = 30
graceful_timeout = 20
keepalive = 5
max_requests = 5000
max_requests_jitter = 500
# gunicorn takes the scheme from X-Forwarded-Proto only when the peer is one of the proxies the
# application believes (TRUSTED_PROXIES, empty: none); the client address is the application's.
forwarded_allow_ips = os.environ.get("TRUSTED_PROXIES", "")
# systemd and signals manage the processes; the default control socket ($HOME/.gunicorn) is one
# per user, which two services would share.
control_socket_disable = True
# JSON lines on stderr; the application logs each request itself (with its request id).
logconfig_dict = gunicorn_logconfig(service="compliance")
