# Two entry points for a fresh machine: `make serve` and `make test`. Both create .venv on first use.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: serve test test-all lint install gateway-proxy clean

$(STAMP): pyproject.toml sdk/pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,eval]' -e ./sdk
	touch $(STAMP)

install: $(STAMP)

HOST ?= 127.0.0.1
PORT ?= 8000

## Run the service on the embedded default (SQLite + SQLAlchemy broker + offline model) at http://$(HOST):$(PORT)
serve: $(STAMP)
	$(BIN)/dsx serve --host $(HOST) --port $(PORT)

## Lint (ruff, then the import-layering contracts), then the default test suite (slow tests excluded unless DSX_TEST_SLOW=1)
test: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	$(BIN)/python -m pytest -n 2 --dist loadfile $(if $(DSX_TEST_SLOW),,-m "not slow") $(PYTEST_ARGS)

## The real LiteLLM proxy (its own .venv-gateway, pinned in the script) for the gateway test and bench/gateway.py
gateway-proxy:
	deploy/litellm/install-proxy.sh

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports

clean:
	rm -rf $(VENV) .venv-gateway var .pytest_cache
