# The two commands a new user needs: `make run` and `make test`. Both create .venv first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

# `make run` serves this machine only; open it up with, for example,
#   make run LISTEN=tcp:6923 WEB=tcp:8080
LISTEN ?= tcp:6923:interface=127.0.0.1
WEB ?= tcp:8080:interface=127.0.0.1

.PHONY: venv test lint run bench screenshots clean

venv: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

test: lint
	$(BIN)/python -m pytest -q

run: venv
	$(BIN)/tae-server serve --listen $(LISTEN) --web $(WEB)

bench: venv
	$(BIN)/python -m tests.benchmarks

# The README's pictures: the browser tests write their screenshots into docs/screenshots/ (a
# plain `make test` writes them to a temporary folder and leaves docs/ untouched).
screenshots: venv
	TAE_SCREENSHOTS=$(CURDIR)/docs/screenshots $(BIN)/python -m pytest -q tests/integration/test_browser.py

clean:
	rm -rf $(VENV) build *.egg-info
