# gunicorn settings for the compliance service: `gunicorn -c deploy/gunicorn/compliance.py`.
import multiprocessing
import os

wsgi_app = "compliance_site.wsgi:application"
bind = os.environ.get("COMPLIANCE_BIND", "127.0.0.1:8001")
workers = int(os.environ.get("WEB_CONCURRENCY", multiprocessing.cpu_count() * 2))
worker_class = "sync"
# Requests are short; a stuck worker is recycled rather than left holding a slot.
timeout = 30
graceful_timeout = 20
keepalive = 5
max_requests = 5000
max_requests_jitter = 500
accesslog = "-"
forwarded_allow_ips = "127.0.0.1"
