# gunicorn settings for the news service: `gunicorn -c deploy/gunicorn/news.py`.
# The application reads its settings from the environment (deploy/env/news.env.example);
# NEWS_BIND and WEB_CONCURRENCY set the address and the number of workers.
import multiprocessing
import os

# child_exit, on_exit and on_starting are server hooks: the workers share one Prometheus
# metrics directory (shared/gunicorn_hooks.py).
from shared.gunicorn_hooks import child_exit, gunicorn_logconfig, on_exit, on_starting  # noqa: F401

# One ASGI application: Django, and the MCP tool server at /mcp (news_site/asgi.py).
wsgi_app = "news_site.asgi:application"
# uvicorn's worker with every request bounded in time from its first byte (news_site/server.py).
worker_class = "news_site.server.NewsWorker"
bind = os.environ.get("NEWS_BIND", "127.0.0.1:8000")
# One worker per core: each holds the embedding model and the vector matrix (about 600 MB) and
# runs the model on one thread; the event loop serves concurrent requests within a worker.
workers = int(os.environ.get("WEB_CONCURRENCY", multiprocessing.cpu_count()))
# Each worker serves at most NEWS_MAX_CONCURRENT_REQUESTS (32) requests at once and answers 503
# beyond that; their views share a pool of DB_POOL_MAX_SIZE PostgreSQL connections, waiting
# DB_POOL_TIMEOUT seconds at most for one. The budget of both services together:
# docs/operators-capacity.md. The workers inherit these defaults from this process.
os.environ.setdefault("DB_POOL_MAX_SIZE", "8")
os.environ.setdefault("DB_POOL_MIN_SIZE", "2")
timeout = 30
graceful_timeout = 20
keepalive = 5
# uvicorn takes the scheme and client address from X-Forwarded-Proto / X-Forwarded-For only
# when the peer is one of the proxies the application believes (TRUSTED_PROXIES, empty: none).
forwarded_allow_ips = os.environ.get("TRUSTED_PROXIES", "")
# systemd and signals manage the processes; the default control socket ($HOME/.gunicorn) is one
# per user, which two services would share.
control_socket_disable = True
# JSON lines on stderr; the application logs each request itself (with its request id).
logconfig_dict = gunicorn_logconfig(service="news")


def post_worker_init(worker):
    """Load the embedding model and the vector index before the worker accepts connections, so
    that no request (the first semantic search included) waits for them."""
    from news_site.search.warmup import web_worker_prepare

    web_worker_prepare()
