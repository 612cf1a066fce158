# Every target does its own set-up first (idempotent; fast when already done).
.PHONY: setup run test lint format bench

PY := .venv/bin/python

setup:
	bash scripts/setup.sh

run: setup
	$(PY) evaluate.py 'controllers=[explicit_rate,xrc_policy,cubic]'

test: setup lint
	PYTHONHASHSEED=0 $(PY) -m pytest -m "not slow"

lint:
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .
	clang-format --dry-run --Werror $$(git ls-files 'ns3-scenarios/*.cc' 'ns3-scenarios/*.h')

format: setup
	.venv/bin/ruff check --fix .
	.venv/bin/ruff format .
	clang-format -i $$(git ls-files 'ns3-scenarios/*.cc' 'ns3-scenarios/*.h')

bench: setup
	$(PY) bench/bridge_overhead.py
