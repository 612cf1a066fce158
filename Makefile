# Every target does its own set-up first (idempotent; fast when already done).
.PHONY: setup run test lint format bench bench-fast bench-bridge reports

PY := .venv/bin/python
# The numba kernels compile into a cache outside the checkout (minutes when cold), one per
# checkout path: numba's cache entries are keyed on the absolute path of the kernels' sources, and
# each checkout's cache drops digests its own sources no longer have (envs/fastsim/_numba_cache.py),
# which would be another checkout's when shared. A fresh clone at the same path (CI) reuses it.
export NUMBA_CACHE_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/cellgym/numba-$(shell printf %s "$(CURDIR)" | sha256sum | cut -c1-16)
# Test processes (pytest-xdist); the CI machine has 2 cores.
TEST_WORKERS ?= 2

setup:
	bash scripts/setup.sh

run: setup
	$(PY) train.py experiment=default

test: setup lint
	PYTHONHASHSEED=0 $(PY) -m pytest -m "not slow" -n $(TEST_WORKERS) --dist loadgroup --durations=30

lint:
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .
	clang-format --dry-run --Werror $$(git ls-files 'ns3-scenarios/*.cc' 'ns3-scenarios/*.h')

format: setup
	.venv/bin/ruff check --fix .
	.venv/bin/ruff format .
	clang-format -i $$(git ls-files 'ns3-scenarios/*.cc' 'ns3-scenarios/*.h')

bench: bench-fast bench-bridge

bench-fast: setup
	$(PY) bench/fast_backend.py

bench-bridge: setup
	$(PY) bench/bridge_overhead.py

# Regenerate the committed reports under docs/ whose inputs changed (python -m
# evaluation.experiments.reports lists them); each reruns with its recorded arguments.
reports: setup
	$(PY) -m evaluation.experiments.reports --regenerate
