"""Every script in ``benchmarks/`` still runs: its smoke mode (``--smoke``: tiny scale,
seconds, the same code path) runs in a child process, exits 0, and its last line carries
the ratio and exactness fields its docstring documents, parsed and checked here.

Smoke figures are not measurements (the timings of a few seconds' work, and for the
model benchmarks a tiny random model); only the exactness fields, two paths compared on
the same input, are held to the tolerances the benchmarks themselves use.
``gpu_check.sh`` needs a CUDA machine: its syntax and the options it passes to
``scoring_speed.py`` are checked instead.
"""

from __future__ import annotations

import importlib.util
import math
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BENCH = REPO / "benchmarks"
FIELD = re.compile(r"([A-Za-z_]\w*)=(\S+)")


def fields(line: str) -> dict[str, str]:
    """The ``key=value`` fields of one output line."""
    return dict(FIELD.findall(line))


def smoke(script: str, data: Path, *args: str, timeout: float = 300) -> list[str]:
    """Run ``benchmarks/SCRIPT --smoke ARGS`` from the repository root on the shared data;
    returns its non-empty stdout lines (fails with its output unless it exits 0)."""
    env = {**os.environ, "TAU2_DATA_DIR": str(data), "PYTHONUNBUFFERED": "1"}
    proc = subprocess.run(
        [sys.executable, str(BENCH / script), "--smoke", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert proc.returncode == 0, f"{script} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    assert lines, f"{script} printed nothing:\n{proc.stderr}"
    return lines


def number(got: dict[str, str], key: str) -> float:
    """Field ``key`` as a finite float (fails naming the field when absent or not one)."""
    assert key in got, f"no {key}= in {got}"
    value = float(got[key])
    assert math.isfinite(value), f"{key}={got[key]}"
    return value


def ratio(got: dict[str, str], key: str = "ratio") -> float:
    value = number(got, key)
    assert value > 0, f"{key}={value}"
    return value


def test_fields_reads_every_key_value_pair():
    got = fields("ratio=2.60 max_auroc_diff=0 (best: onnx, 1 thread) checks_passed=3/5")
    assert got == {"ratio": "2.60", "max_auroc_diff": "0", "checks_passed": "3/5"}


def test_pt2d_speed_smoke_is_exact_against_scikit_learn(shared_data):
    lines = smoke("pt2d_speed.py", shared_data)
    last = fields(lines[-1])
    ratio(last)
    # the engine's AUROCs against scikit-learn's (docs/leakage.md: last bits at most)
    assert number(last, "max_auroc_diff") <= 1e-5
    intervals = fields(lines[-2])
    assert number(intervals, "max_ci_diff") <= 1e-9  # the same draws, both bootstraps
    stages = fields(next(line for line in lines if line.startswith("text_ratio=")))
    for key in ("text_ratio", "fit_ratio", "interval_ratio"):
        ratio(stages, key)


def test_synthetic_speed_smoke_builds_the_same_designs(shared_data):
    last = fields(smoke("synthetic_speed.py", shared_data)[-1])
    ratio(last)
    assert last.get("same") == "True"


def test_warm_start_smoke_prints_ratio_and_auroc_difference(shared_data):
    last = fields(smoke("warm_start.py", shared_data)[-1])
    ratio(last)
    assert 0 <= number(last, "max_auroc_diff") <= 1  # warm fits differ by design


def test_provenance_speed_smoke_names_the_same_fields(shared_data):
    last = fields(smoke("provenance_speed.py", shared_data)[-1])
    ratio(last)
    assert last.get("same_fields") == "True"


def test_probe_speed_smoke_bootstraps_agree(shared_data):
    last = fields(smoke("probe_speed.py", shared_data)[-1])
    ratio(last)
    assert number(last, "max_ci_diff") <= 1e-12


def test_tcr_calibration_smoke_runs_all_five_checks(shared_data):
    last = fields(smoke("tcr_calibration.py", shared_data)[-1])
    passed, _, run = last["checks_passed"].partition("/")
    assert int(run) == 5 and 0 <= int(passed) <= 5
    assert float(last["scale"]) == 0.005 and int(last["examples"]) > 0


def test_faults_speed_smoke_census_and_scorers_agree(shared_data):
    lines = smoke("faults_speed.py", shared_data)
    census = fields(next(line for line in lines if line.startswith("ratio=")))
    ratio(census)
    assert census.get("identical") == "True"
    last = fields(lines[-1])
    assert number(last, "tokens_ratio") >= 1  # never fewer than the distinct prefixes
    ratio(last, "calls_per_decision")
    ratio(last, "cpu_ratio")
    ratio(last, "wall_ratio")
    assert number(last, "max_row_diff") <= 1e-4


def test_continuation_speed_smoke_tree_matches_batch(shared_data):
    last = fields(smoke("continuation_speed.py", shared_data)[-1])
    ratio(last)
    assert number(last, "max_abs_diff") <= 1e-4


def test_scoring_speed_smoke_layer_matches_naive(shared_data):
    last = fields(smoke("scoring_speed.py", shared_data)[-1])
    ratio(last)
    assert number(last, "max_abs_diff") <= 1e-3  # the script's own --tolerance


def test_onnx_speed_smoke_export_matches_transformers(shared_data):
    last = fields(smoke("onnx_speed.py", shared_data)[-1])
    ratio(last, "score_ratio")
    assert number(last, "max_mean_diff") <= 1e-3


@pytest.mark.slow  # the real GGUF's load and prefill: about two minutes on 2 busy cores
@pytest.mark.model
@pytest.mark.llama
def test_engine_speed_smoke_engines_agree(shared_data):
    pytest.importorskip("llama_cpp")
    last = fields(smoke("engine_speed.py", shared_data, timeout=600)[-1])
    ratio(last, "score_ratio")
    ratio(last, "decode_ratio")
    assert number(last, "max_mean_diff") <= 0.1  # quantized weights: 0.0146 measured


@pytest.mark.llama
def test_embedded_speed_smoke_times_the_three_models(shared_data):
    """The three GGUFs, loaded and timed by llama.cpp (about a minute on 2 busy cores)."""
    pytest.importorskip("llama_cpp")
    last = fields(smoke("embedded_speed.py", shared_data, timeout=600)[-1])
    for name in ("qwen15b", "smollm2"):
        ratio(last, f"prompt_ratio_{name}")
        ratio(last, f"decode_ratio_{name}")


def test_gpu_check_parses_and_passes_valid_options():
    script = BENCH / "gpu_check.sh"
    subprocess.run(["bash", "-n", str(script)], check=True)
    dry = subprocess.run(
        ["bash", str(script), "--dry-run"], capture_output=True, text=True, check=True
    )
    commands = [shlex.split(line) for line in dry.stdout.splitlines() if line.strip()]
    assert len(commands) == 6  # three shapes, two dtypes
    spec = importlib.util.spec_from_file_location("scoring_speed", BENCH / "scoring_speed.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    seen = set()
    for cmd in commands:
        assert cmd[1] == "benchmarks/scoring_speed.py"
        args = module.parser().parse_args(cmd[2:])
        assert args.device == "cuda" and args.random_init in module.SHAPES
        assert args.tolerance == (1e-3 if args.dtype == "float32" else 1.0)
        seen.add((args.random_init, args.dtype))
    assert seen == {(s, d) for s in ("gemma", "qwen", "qwen7b") for d in ("float32", "bfloat16")}
    bad = subprocess.run(["bash", str(script), "--nope"], capture_output=True, text=True)
    assert bad.returncode == 2 and "usage:" in bad.stderr


def test_inspect_batch_speed_smoke_gives_the_same_records(shared_data):
    pytest.importorskip("inspect_evals")
    last = fields(smoke("inspect_batch_speed.py", shared_data)[-1])
    ratio(last)
    assert last.get("same_records") == "True"
