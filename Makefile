# Two commands: `make run` starts the web UI, `make test` runs the whole suite.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# llama-cpp-python compiles from source; build it for a portable x86-64 baseline
# (a native build uses AMX on some CPUs and crashes when a model loads).
export CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON
export FORCE_CMAKE := 1
export GRADIO_ANALYTICS_ENABLED := False
export ANONYMIZED_TELEMETRY := False

.PHONY: run test lint bench install install-dev clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# Stamp files keep repeated runs fast: reinstall only when pyproject.toml changes.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[dev,local]'
	touch $@ $(VENV)/.installed

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

run: install
	$(BIN)/python app.py

test: install-dev
	$(BIN)/ruff check .
	$(BIN)/python -m mypy
	$(BIN)/python -m pytest

# Lint and type-check (mypy with the pydantic plugin over advisor/, tools/ and knowledge/; see pyproject.toml).
lint: install-dev
	$(BIN)/ruff check .
	$(BIN)/python -m mypy

bench: install-dev
	$(BIN)/python bench/run_all.py

clean:
	rm -rf $(VENV) build *.egg-info
