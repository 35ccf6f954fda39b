# The two commands a new user needs: `make run` and `make test`. Both create .venv first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

# `make run` serves this machine only; open it up with, for example,
#   make run LISTEN=tcp:6923 WEB=tcp:8080
LISTEN ?= tcp:6923:interface=127.0.0.1
# `make test` runs the test files in this many processes (pytest-xdist; a file stays in one
# process). Most tests wait on sockets, servers and databases rather than on the CPU, so three
# fit two cores; TEST_JOBS=0 runs them in one process.
TEST_JOBS ?= 3
WEB ?= tcp:8080:interface=127.0.0.1

.PHONY: venv test lint run bench screenshots schemathesis clean

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

# The tests (and the linters) leave a clone as they found it: `git status` is the same after
# them as before (anything they write goes to a temporary folder or is in .gitignore).
test: venv
	@git status --porcelain --untracked-files=all > $(VENV)/.status-before 2>/dev/null || true
	$(MAKE) --no-print-directory lint
	$(BIN)/python -m pytest -q -n $(TEST_JOBS) --dist loadfile
	@git status --porcelain --untracked-files=all > $(VENV)/.status-after 2>/dev/null || true
	@cmp -s $(VENV)/.status-before $(VENV)/.status-after || \
		{ echo "make test changed the clone:"; diff $(VENV)/.status-before $(VENV)/.status-after; exit 1; }

run: venv
	$(BIN)/tae-server serve --listen $(LISTEN) --web $(WEB) --limit computer_games_per_account=3

bench: venv
	$(BIN)/python -m tests.benchmarks

# The README's pictures: the browser tests write their screenshots into docs/screenshots/ (a
# plain `make test` writes them to a temporary folder and leaves docs/ untouched).
screenshots: venv
	TAE_SCREENSHOTS=$(CURDIR)/docs/screenshots $(BIN)/python -m pytest -q tests/integration/test_browser.py

# The JSON API against its OpenAPI document (server/web/openapi.json), longer than the minute
# `make test` gives it: SECONDS of Schemathesis and EXAMPLES per operation.
SECONDS ?= 600
EXAMPLES ?= 50
schemathesis: venv
	TAE_SCHEMATHESIS_SECONDS=$(SECONDS) TAE_SCHEMATHESIS_EXAMPLES=$(EXAMPLES) \
		$(BIN)/python -m pytest -q -p no:cacheprovider tests/integration/test_api_schemathesis.py

clean:
	rm -rf $(VENV) build *.egg-info
