# The operator interface: `make run` and `make test` do all the set-up on a fresh machine.
SHELL := /bin/bash
# The first supported interpreter found, looked up once and kept as its own path (a pyenv shim
# costs a second per call); `make run PYTHON=python3.13` chooses another. Every one of them has
# semantic search: it needs no torch (news_site/search/onnx_export.py).
ifeq ($(origin PYTHON),undefined)
PYTHON := $(shell for p in python3.11 python3.12 python3.13 python3; do $$p -c 'import sys; \
  ok = (3, 11) <= sys.version_info[:2] <= (3, 13); ok and print(sys.executable); \
  sys.exit(not ok)' 2>/dev/null && break; done)
endif
PYVER := $(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
VENV ?= .venv
BIN := $(VENV)/bin
# Two stamps per interpreter (a .venv made by another Python is rebuilt): what running needs
# (make run, run-prod), and that plus the test tooling (make test, lint, smoke, bench).
RUNTIME := $(VENV)/.installed-run-$(PYVER)
INSTALLED := $(VENV)/.installed-test-$(PYVER)
NEWS_PORT ?= 8000
COMPLIANCE_PORT ?= 8001
PG_URL ?= postgres://postgres@127.0.0.1:5432
REDIS_SERVER ?= redis://127.0.0.1:6379
# The tests' Redis databases: each backend's first worker uses this number, the others the next
# ones (tests/conftest.py).
SQLITE_REDIS_DB ?= 10
POSTGRES_REDIS_DB ?= 12

.PHONY: run run-prod run-prod-admin test lint format bench clean mcp-conformance smoke smoke-installed

$(RUNTIME): pyproject.toml scripts/install.sh
	@[ -n "$(PYVER)" ] || { echo "No supported Python (3.11-3.13) found (PYTHON=$(PYTHON)); install one or pass PYTHON=/path/to/python3.1x" >&2; exit 1; }
	@VENV=$(VENV) PYTHON=$(PYTHON) bash scripts/install.sh run
	@rm -f $(VENV)/.installed-*
	@touch $@

$(INSTALLED): $(RUNTIME)
	@VENV=$(VENV) PYTHON=$(PYTHON) bash scripts/install.sh test
	@touch $@

# The quick start (scripts/quickstart.sh): embedded SQLite, in-process caches, the demo data,
# both services on loopback with the task worker and the ingest schedule; settings in .env.
# Taken ports are refused first, in a second, before anything is installed or started.
run:
	@$(or $(PYTHON),python3) scripts/ports_free.py NEWS_PORT=$(NEWS_PORT) COMPLIANCE_PORT=$(COMPLIANCE_PORT)
	@$(MAKE) --no-print-directory $(RUNTIME) PYTHON=$(PYTHON)
	@NEWS_PORT=$(NEWS_PORT) COMPLIANCE_PORT=$(COMPLIANCE_PORT) VENV=$(VENV) bash scripts/quickstart.sh

# The deployed stack on loopback from the shipped deploy/ configs: nginx with TLS (self-signed)
# in front of gunicorn for both services, the news task worker, PostgreSQL and Redis.
# It shares the quick start's secret key (from .env) and reads nothing else from .env.
run-prod: $(RUNTIME)
	$(BIN)/python scripts/quickstart_env.py .env --var-dir var
	SECRET_KEY="$$($(BIN)/python -c 'from dotenv import dotenv_values; print(dotenv_values(".env")["SECRET_KEY"])')" \
	  PG_URL="$(PG_URL)" ENV_FILE= bash scripts/run_prod.sh

# An admin account in run-prod's databases (Django's createsuperuser with run-prod's settings;
# SERVICE=news|compliance|both, ARGS="--noinput --username U --email E" with
# DJANGO_SUPERUSER_PASSWORD set for no questions).
SERVICE ?= both
run-prod-admin: $(RUNTIME)
	@$(BIN)/python scripts/quickstart_env.py .env --var-dir var
	@SECRET_KEY="$$($(BIN)/python -c 'from dotenv import dotenv_values; print(dotenv_values(".env").get("SECRET_KEY") or "")')" \
	  PG_URL="$(PG_URL)" ENV_FILE= bash scripts/run_prod.sh createsuperuser $(SERVICE) $(ARGS)

# Types: django-stubs reads one settings module per run, so each project is checked on its own
# (with its own cache); the settings need a secret key and must not read a developer's .env.
lint: $(INSTALLED)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	SECRET_KEY=type-checking-only ENV_FILE= DJANGO_SETTINGS_MODULE=compliance_site.settings \
	  $(BIN)/mypy --cache-dir .mypy_cache/compliance shared compliance_site
	SECRET_KEY=type-checking-only ENV_FILE= DJANGO_SETTINGS_MODULE=news_site.settings \
	  $(BIN)/mypy --cache-dir .mypy_cache/news news_site

format: $(INSTALLED)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# The whole suite: lint, then every project's tests on PostgreSQL + Redis, and on SQLite those
# marked every_backend or embedded_only (docs/testing.md); when PostgreSQL or Redis do not answer
# (outside CI, where a missing service fails the run) everything runs on SQLite. The two backends
# and the MCP conformance suite run at the same time (scripts/test_backend.sh, each test part on
# two pytest-xdist workers); each one's output is shown whole once it is done, and any failure
# fails the target. docs/testing.md says what runs where.
test: export SECRET_KEY = test-only-secret-key-not-for-production
test: export SECURE_SSL_REDIRECT = false
test: lint
	@set -e; \
	$(BIN)/python -m compliance_site makemigrations --check --dry-run -v 0 || { echo "missing migrations (compliance)"; exit 1; }; \
	$(BIN)/python -m news_site makemigrations --check --dry-run -v 0 || { echo "missing migrations (news)"; exit 1; }; \
	backends="sqlite"; only=1; \
	if $(BIN)/python scripts/services_ready.py "$(PG_URL)/postgres" "$(REDIS_SERVER)/$(SQLITE_REDIS_DB)"; then \
	  backends="sqlite postgres"; only=0; \
	elif [ -n "$$CI" ]; then echo "PostgreSQL or Redis is not reachable"; exit 1; \
	else echo "!! PostgreSQL or Redis not reachable: running on SQLite only"; fi; \
	logs=$$(mktemp -d); trap 'rm -rf "$$logs"' EXIT; pids=""; \
	for backend in $$backends; do \
	  db=$$([ $$backend = postgres ] && echo $(POSTGRES_REDIS_DB) || echo $(SQLITE_REDIS_DB)); \
	  VENV=$(VENV) PG_URL="$(PG_URL)" TEST_REDIS_URL="$(REDIS_SERVER)/$$db" ONLY_BACKEND=$$only \
	    bash scripts/test_backend.sh $$backend >"$$logs/$$backend" 2>&1 & pids="$$pids $$!"; \
	done; \
	$(MAKE) --no-print-directory mcp-conformance >"$$logs/mcp" 2>&1 & pids="$$pids $$!"; \
	failed=""; set -- $$backends mcp; \
	for pid in $$pids; do \
	  if wait $$pid; then status=passed; else status=FAILED; failed="$$failed $$1"; fi; \
	  echo "==== $$1: $$status"; cat "$$logs/$$1"; shift; \
	done; \
	[ -z "$$failed" ] || { echo "==== failed:$$failed"; exit 1; }

# CI's check of the newest supported Python (or SMOKE_PYTHON): its own virtualenv, the quick
# start serving both services, the HTTP API tests on SQLite (scripts/smoke.sh).
SMOKE_PYTHON ?= python3.13
smoke:
	$(MAKE) --no-print-directory VENV=.venv-smoke PYTHON=$(SMOKE_PYTHON) smoke-installed
	VENV=.venv-smoke bash scripts/smoke.sh

smoke-installed: $(INSTALLED)

# Every benchmark, then one table of figures and targets in benchmarks/RESULTS.md and
# docs/benchmarks.md.
bench: $(INSTALLED)
	$(BIN)/python benchmarks/run_all.py

# Everything the commands made: the virtualenvs, var/ (databases, demo repository, mail), .env
# and the caches.
clean:
	rm -rf $(VENV) .venv-smoke var .env build *.egg-info .pytest_cache .ruff_cache .mypy_cache .hypothesis .schemathesis benchmarks/results
	find . -name __pycache__ -type d -prune -not -path './node_modules/*' -exec rm -rf {} +

# The official MCP conformance suite against a live tool server (installs Node 22 if needed).
mcp-conformance: $(INSTALLED)
	VENV=$(VENV) bash scripts/mcp_conformance.sh
