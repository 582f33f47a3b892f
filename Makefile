# golden-distill: everything a fresh machine needs is set up by these targets (Python 3.11+ and make).
#   make demo   - generate a sample corpus (first time) and run the main job end to end
#   make test   - lint (ruff) and the whole test suite, with the servers the tests need
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_DIR ?= .demo

.PHONY: demo test lint format bench clean venv lock

venv: $(STAMP)

# Pinned dependencies: requirements.lock (what the wheel needs to run) and requirements-dev.lock
# (tests, lint, test servers, building), then the project itself (editable, no deps).
$(STAMP): pyproject.toml requirements.lock requirements-dev.lock setup.py
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade "pip>=24"
	$(BIN)/python -m pip install --quiet -r requirements.lock -r requirements-dev.lock
	@# setuptools prints an "Editable installation" notice box (folders named like the package may
	@# shadow it); our layout rules that out (tests/test_layout.py), so the notice is silenced.
	PYTHONWARNINGS="ignore:Editable installation" \
	  $(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	@touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m golden_distill.flows.demo --dir $(DEMO_DIR)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

format: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

test: $(STAMP) lint
	bash tests/run_tests.sh

bench: $(STAMP)
	for b in bench/*.py; do $(BIN)/python $$b || exit 1; done

# Regenerate both locks from the installed versions (after installing a changed pyproject.toml
# dependency into .venv): tests/support/locks.py splits runtime from development pins.
lock: $(STAMP)
	$(BIN)/python tests/support/locks.py

clean:
	rm -rf $(VENV) $(DEMO_DIR) build *.egg-info
