# Every target does its own set-up first (idempotent; fast when already done).
.PHONY: setup run test lint format bench bench-fast bench-bridge reports

PY := .venv/bin/python
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
