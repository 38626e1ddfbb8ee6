# Two commands for a newcomer: `make demo` plays a game on the embedded model, `make test` runs
# every test. Each creates or updates the local virtual environment (.venv) by itself; the first
# run compiles llama-cpp-python from source (about 8 minutes on 2 cores), later runs reuse it.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
export LANGSMITH_TRACING ?= false
export LANGSMITH_TEST_TRACKING ?= false
export LANGGRAPH_CLI_NO_ANALYTICS ?= 1

.PHONY: venv demo test test-fast docs typecheck bench lint format chromium clean

# llama.cpp for any x86-64 CPU with AVX2, not -march=native: a native build also uses AMX where
# the CPU reports it, and some virtual machines report AMX without enabling it (every model call
# then crashes). Override with `make venv LLAMA_CMAKE_ARGS=...`.
LLAMA_CMAKE_ARGS ?= $(if $(filter x86_64,$(shell uname -m)),-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON)

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" CMAKE_BUILD_PARALLEL_LEVEL=2 $(PY) -m pip install --quiet -e '.[dev,scale]'
	touch $(STAMP)

venv: $(STAMP)

demo: venv
	rm -rf runs/demo  # one folder per game: the new demo replaces the last one
	$(VENV)/bin/wargraph play azuristan_crimsonia --rounds 2 --out runs/demo --db runs/demo.sqlite
	@echo; cat runs/demo/transcript.md

# Debian's Chromium for the browser tests (never a browser download of a test tool's own).
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq chromium >/dev/null; \
	  elif command -v sudo >/dev/null; then sudo apt-get update -qq && sudo apt-get install -y -qq chromium >/dev/null; \
	  else echo "chromium not installed and no root: browser tests will be skipped"; fi; }

# Tests run on WORKERS processes (pytest-xdist; `make test WORKERS=0` for one process). Tests that
# share a server, Chromium or the embedded model share a worker (--dist loadgroup, tests/conftest.py).
WORKERS ?= auto
XDIST := -n $(WORKERS) --dist loadgroup

# One llama.cpp thread per worker: the workers already fill the cores, and a llama.cpp thread
# without a core spins (a 96-token answer cost ~14x the CPU with 2 threads on 2 busy cores).
test test-fast: export WARGRAPH_LLAMA_THREADS ?= 1

test: venv chromium docs
	$(PY) -m ruff check .
	$(PY) -m mypy
	$(PY) -m pytest -q $(XDIST) --durations=25

# The documentation site from docs/ (mkdocs.yml); --strict: a broken link or reference fails.
docs: venv
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict --quiet

# The unit tests (markers say what is slow: the embedded model, servers, browsers and
# tests/reliability's kill/resume, load and fuzzing tests); under 2 minutes on 2 cores.
test-fast: venv
	$(PY) -m pytest -q $(XDIST) --durations=25 -m "not slow and not model and not server and not browser and not reliability"

# mypy over src/wargraph (one source root); settings in pyproject.toml
typecheck: venv
	$(PY) -m mypy

bench: venv
	$(PY) -m benchmarks

lint: venv
	$(PY) -m ruff check . && $(PY) -m ruff format --check .

format: venv
	$(PY) -m ruff format . && $(PY) -m ruff check --fix .

clean:
	rm -rf runs .pytest_cache .ruff_cache .mypy_cache build dist *.egg-info
