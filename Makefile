# combex: `make demo` and `make test` do all set-up on a fresh machine.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip
PYTEST_ARGS ?=
# Test processes (pytest-xdist): one per core; `make test PYTEST_JOBS=0` runs in this process.
PYTEST_JOBS ?= auto

.PHONY: demo test test-fast install install-test bench docs clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(PIP) install --upgrade pip >/dev/null

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(PIP) install -e . && touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(PIP) install -e ".[test,mips,plots,data,notebooks,dask,sweep,docs,studies]"
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $@ $(VENV)/.installed

$(VENV)/.installed-demo: pyproject.toml | $(BIN)/python
	$(PIP) install -e ".[plots]" && touch $@

install: $(VENV)/.installed
install-test: $(VENV)/.installed-test

demo: $(VENV)/.installed-demo
	$(BIN)/combex demo

test: $(VENV)/.installed-test docs
	$(BIN)/python -m pytest -q -p no:cacheprovider -n $(PYTEST_JOBS) --dist worksteal --durations=25 $(PYTEST_ARGS)

# The documentation site (Sphinx), warnings as errors; `make test` builds it first.
docs: $(VENV)/.installed-test
	$(BIN)/python -m sphinx -W --keep-going -q -b html -d docs/_build/doctrees docs docs/_build/html

test-fast: $(VENV)/.installed-test
	$(BIN)/python -m pytest -q -p no:cacheprovider -n $(PYTEST_JOBS) --dist worksteal -m "not slow" -x $(PYTEST_ARGS)

bench: $(VENV)/.installed-test
	for f in benchmarks/*.py; do echo "== $$f"; $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis docs/_build
