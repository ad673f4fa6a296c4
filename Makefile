# The two commands of the README:
#   make demo   - set up, then run a sample program with `gasync run`
#   make test   - set up, then lint, type-check and run the whole test suite
# Everything the project needs is installed here: a virtual environment with
# the Python packages, and Graphviz's `dot` program where apt-get can get it.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
SAMPLE ?= samples/async_double.gasync

.PHONY: setup dot demo test lint typecheck pytest clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $@

# Graphviz's renderer; DOT text works without it, images need it.
dot:
	@command -v dot >/dev/null 2>&1 || { \
	  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq graphviz >/dev/null) \
	  || echo "warning: could not install Graphviz's 'dot'; image output will be unavailable"; }

demo: setup
	$(BIN)/gasync run $(SAMPLE)

lint: setup
	$(BIN)/ruff check .

# mypy needs a folder named `gasync`; the repository root is that package.
typecheck: setup
	@mkdir -p build/typecheck && ln -sfn "$(CURDIR)" build/typecheck/gasync
	MYPYPATH=build/typecheck $(BIN)/mypy -p gasync.dsl -p gasync.planner -m gasync -m gasync.api -m gasync.notebook -m gasync.runtime.outputs

# over the machine's cores, at most 4 processes (CI has 2 cores: the suite takes about half as long);
# an idle worker takes tests still queued on another (a long simulator test last held one up)
pytest: setup
	$(BIN)/pytest -q -n auto --maxprocesses 4 --dist worksteal

test: setup dot lint typecheck pytest

clean:
	rm -rf $(VENV) build .pytest_cache .mypy_cache .ruff_cache .hypothesis
