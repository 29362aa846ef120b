# pldp developer commands. Each target creates .venv on first use.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

OLDEST := .venv-oldest
#: The extras the tests install (make test's and make test-oldest's environments).
EXTRAS := experiments distributed deploy service

# Python writes its bytecode caches (__pycache__, ignored by git) even where the environment says
# not to: the suite starts some hundred Python processes (CLI commands, collectors, Dask workers),
# each of which would otherwise compile every module it imports from source again. pip installs
# without compiling (--no-compile): compiling the whole environment (some 9,000 files) takes 30 s
# on two cores, while the first process that imports a module compiles only what it uses (about
# 1,800 modules for the suite, 12 s of one core) and every later process reads the cache.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: demo test test-fast test-oldest dist bench bench-quick audit lint docs format clean

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@$(PY) -m pip install -q --upgrade pip
	@$(PY) -m pip install -q --no-compile -e ".[dev,experiments,distributed,deploy,service]"
	@rm -f $(VENV)/.installed-*
	@touch $@

$(VENV)/.bench-installed: $(STAMP)
	@$(PY) -m pip install -q -e ".[dev,experiments,distributed,bench]"
	@touch $@

$(VENV)/.docs-installed: $(STAMP)
	@$(PY) -m pip install -q -e ".[docs]"
	@touch $@

demo: $(STAMP)  ## run the main job: every paper's experiments at quick scale -> results/, then a collection
	$(VENV)/bin/pldp reproduce all --quick --out results
	$(VENV)/bin/pldp demo-collection

# --dist loadfile: a test file runs in one worker, so that its module's collector or browser starts once.
test: $(STAMP)  ## run the test suite (doctests included) on both cores
	@echo "make test runs on:" && $(PY) .ci/deps.py versions test $(EXTRAS) | sed 's/^/  /'
	$(PY) -m pytest -n 2 --dist loadfile -q src tests docs/guide --doctest-glob='docs/guide/*.md'

test-fast: $(STAMP)  ## the test suite without the tests marked slow; lists the 15 slowest that ran
	$(PY) -m pytest -n 2 --dist loadfile -q -m "not slow" --durations=15 src tests docs/guide --doctest-glob='docs/guide/*.md'

test-oldest:  ## the tests not marked slow, in a new .venv-oldest with every dependency at its declared lower bound
	rm -rf $(OLDEST)
	$(PYTHON) -m venv $(OLDEST)
	@$(OLDEST)/bin/python -m pip install -q --upgrade pip
	$(PYTHON) .ci/deps.py lower $(EXTRAS) > $(OLDEST)/lower-bounds.txt
	$(OLDEST)/bin/python -m pip install -q --no-compile -c $(OLDEST)/lower-bounds.txt -e ".[test,$(shell echo $(EXTRAS) | tr ' ' ',')]"
	@echo "make test-oldest runs on:" && $(OLDEST)/bin/python .ci/deps.py versions test $(EXTRAS) | sed 's/^/  /'
	$(OLDEST)/bin/python -m pytest -n 2 --dist loadfile -q -m "not slow" src tests docs/guide --doctest-glob='docs/guide/*.md'

dist: $(STAMP)  ## a wheel of pldp (its static files and bundled data included) -> dist/
	rm -rf build dist
	$(PY) -m pip wheel -q --no-deps --wheel-dir dist .
	@ls dist/*.whl

bench: $(VENV)/.bench-installed  ## speed benchmarks, pldp and its peers -> benchmarks/results.md and README
	$(PY) benchmarks/run.py

bench-quick: $(VENV)/.bench-installed
	$(PY) benchmarks/run.py --quick

audit: $(STAMP)  ## empirical privacy audit of every mechanism and protocol (-> docs/audit.md), over time (-> docs/audit-rounds.svg), and the whole-history accountant's figure (-> docs/rounds-privacy.svg)
	$(PY) -m pldp.audit.catalog --trials 1000000 --out docs/audit.md
	$(PY) -m pldp.audit.rounds_figure --trials 200000 --out docs/audit-rounds.svg
	$(PY) -m pldp.audit.history_figure --out docs/rounds-privacy.svg

lint: $(STAMP)  ## ruff check, format check, and the mypy type check of src/
	$(VENV)/bin/ruff check src tests benchmarks examples docs/conf.py docs/_ext
	$(VENV)/bin/ruff format --check src tests benchmarks examples docs/conf.py docs/_ext
	$(VENV)/bin/mypy

docs: $(VENV)/.docs-installed  ## the documentation site, offline, warnings as errors -> docs/_build/html
	$(VENV)/bin/sphinx-build -W --keep-going -b html docs docs/_build/html

format: $(STAMP)
	$(VENV)/bin/ruff format src tests benchmarks examples docs/conf.py docs/_ext
	$(VENV)/bin/ruff check --fix src tests benchmarks examples docs/conf.py docs/_ext

clean:
	rm -rf $(VENV) $(OLDEST) .pytest_cache .ruff_cache build dist src/*.egg-info docs/_build docs/auto_examples docs/api/generated
