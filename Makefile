# The operator interface: `make run` and `make test` do all the set-up on a fresh machine.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
NEWS_PORT ?= 8000
COMPLIANCE_PORT ?= 8001
PG_URL ?= postgres://postgres@127.0.0.1:5432
TEST_REDIS_URL ?= redis://127.0.0.1:6379/15

.PHONY: run run-prod test lint format bench clean mcp-conformance

$(BIN)/.installed: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,semantic]'
	touch $@

var/secret_key:
	mkdir -p var
	$(BIN)/python -c 'import secrets; print(secrets.token_urlsafe(50))' > $@

# The quick start: embedded SQLite and in-process caches, demo data, both services on loopback.
run: $(BIN)/.installed var/secret_key
	export SECRET_KEY="$$(cat var/secret_key)" SECURE_SSL_REDIRECT=false; \
	$(BIN)/python -m compliance_site migrate --noinput -v 0 && \
	$(BIN)/python -m compliance_site load_demo && \
	$(BIN)/python -m news_site migrate --noinput -v 0 && \
	if $(BIN)/python -m news_site help load_demo >/dev/null 2>&1; then $(BIN)/python -m news_site load_demo; fi && \
	trap 'kill 0' EXIT INT TERM; \
	$(BIN)/gunicorn news_site.asgi:application -k uvicorn_worker.UvicornWorker --bind 127.0.0.1:$(NEWS_PORT) --workers 1 & \
	$(BIN)/gunicorn compliance_site.wsgi --bind 127.0.0.1:$(COMPLIANCE_PORT) --workers 1 --threads 4 & \
	echo "news: http://127.0.0.1:$(NEWS_PORT)/  compliance: http://127.0.0.1:$(COMPLIANCE_PORT)/api/v1/compliance/meta"; \
	wait

# The deployed stack on loopback from the shipped deploy/ configs: nginx with TLS (self-signed)
# in front of gunicorn for both services, the news task worker, PostgreSQL and Redis.
run-prod: $(BIN)/.installed var/secret_key
	PG_URL="$(PG_URL)" bash scripts/run_prod.sh

lint: $(BIN)/.installed
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

format: $(BIN)/.installed
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# The whole suite: lint, then every project's tests on SQLite, and on PostgreSQL + Redis when
# they answer (CI makes sure they do; there a missing service fails the run).
test: export SECRET_KEY = test-only-secret-key-not-for-production
test: export SECURE_SSL_REDIRECT = false
test: lint
	@set -e; \
	$(BIN)/python -m compliance_site makemigrations --check --dry-run -v 0 || { echo "missing migrations (compliance)"; exit 1; }; \
	$(BIN)/python -m news_site makemigrations --check --dry-run -v 0 || { echo "missing migrations (news)"; exit 1; }; \
	backends="sqlite"; \
	if $(BIN)/python scripts/services_ready.py "$(PG_URL)/postgres" "$(TEST_REDIS_URL)"; then \
	  backends="sqlite postgres"; \
	elif [ -n "$$CI" ]; then echo "PostgreSQL or Redis is not reachable"; exit 1; \
	else echo "!! PostgreSQL or Redis not reachable: running on SQLite only"; fi; \
	for backend in $$backends; do \
	  if [ $$backend = postgres ]; then \
	    export COMPLIANCE_DATABASE_URL="$(PG_URL)/compliance" NEWS_DATABASE_URL="$(PG_URL)/news" REDIS_URL="$(TEST_REDIS_URL)"; \
	  else unset COMPLIANCE_DATABASE_URL NEWS_DATABASE_URL REDIS_URL; fi; \
	  export TEST_REDIS_URL="$(TEST_REDIS_URL)"; \
	  echo "== compliance on $$backend"; \
	  DJANGO_SETTINGS_MODULE=compliance_site.settings $(BIN)/pytest tests/compliance tests/shared -q; \
	  echo "== news on $$backend"; \
	  DJANGO_SETTINGS_MODULE=news_site.settings $(BIN)/pytest tests/news -q; \
	done; \
	unset COMPLIANCE_DATABASE_URL NEWS_DATABASE_URL REDIS_URL; \
	echo "== MCP conformance"; \
	$(MAKE) --no-print-directory mcp-conformance

# Every benchmark, then one table of figures and targets in benchmarks/RESULTS.md and the README.
bench: $(BIN)/.installed
	$(BIN)/python benchmarks/run_all.py

clean:
	rm -rf var

# The official MCP conformance suite against a live tool server (installs Node 22 if needed).
mcp-conformance: $(BIN)/.installed
	bash scripts/mcp_conformance.sh
