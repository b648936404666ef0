.PHONY: run test lint bench cluster

run:
	scripts/run

test:
	scripts/test

lint:
	.venv/bin/ruff check app tests scripts bench migrations
	.venv/bin/mypy

cluster:
	scripts/dev-cluster up

bench:
	@for b in bench/bench_*.py; do echo "== $$b"; .venv/bin/python $$b || exit 1; done
