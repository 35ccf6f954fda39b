# The two commands a new user needs: `make run` and `make test`. Both create .venv first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: venv test run bench clean

venv: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

test: venv
	$(BIN)/python -m pytest -q

run: venv
	$(BIN)/tae-server serve --web tcp:8080:interface=127.0.0.1

bench: venv
	$(BIN)/python -m tests.benchmarks

clean:
	rm -rf $(VENV) build *.egg-info
