"""``--config`` replays every option that changes results, with its recorded type (issue
43, Deliver 6): each command that writes a results file with recorded options runs small,
its results file is replayed, and the replay's results are byte for byte the original's.
A recorded boolean where a number belongs is refused by name, and a replayed results file
never chooses where the replay writes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from toolaudit.cli.main import main
from toolaudit.traces import Episode, Message, write_jsonl

REPO = Path(__file__).resolve().parents[2]


def _ok(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-q", *argv]) == 0, capsys.readouterr().err
    capsys.readouterr()


def _episodes(path: Path, rewards: list[float]) -> Path:
    eps = [Episode(task_id=f"t{i}", messages=[Message(role="user", content="q")], reward=r)
           for i, r in enumerate(rewards)]  # fmt: skip
    write_jsonl(path, eps)
    return path


def test_replay_leakage_is_byte_identical_with_min_df_and_max_features(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.leakage.conftest import adversarial_examples

    data = tmp_path / "examples.jsonl"
    write_jsonl(data, adversarial_examples(n=80, seed=2))
    first = tmp_path / "first" / "leakage.json"
    _ok(["leakage", str(data), "--out", str(first.parent), "--n-boot", "30", "--no-dilution",
         "--min-df", "3", "--max-features", "word_1_2=50"], capsys)  # fmt: skip
    again = tmp_path / "again"
    _ok(["leakage", str(data), "--config", str(first), "--out", str(again)], capsys)
    assert (again / "leakage.json").read_bytes() == first.read_bytes()
    doc = json.loads(first.read_text())
    assert {r["min_df"] for r in doc["scopes"]} == {3}  # the option mattered


def test_replay_redact_is_byte_identical_with_its_eval_filter(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from toolaudit.datasets import make_tcr_shortcut
    from toolaudit.models import save_pipeline, train_controlled_model

    examples = make_tcr_shortcut(scale=0.02, seed=1)
    write_jsonl(tmp_path / "examples.jsonl", examples)
    model = tmp_path / "frozen.joblib"
    save_pipeline(train_controlled_model(examples, seed=1), model)
    first = tmp_path / "first" / "redaction.json"
    _ok(["redact", str(tmp_path / "examples.jsonl"), "--out", str(first.parent), "--model",
         f"sklearn:{model}", "--limit", "20", "--n-boot", "50", "--eval", "split=train"],
        capsys)  # fmt: skip
    assert json.loads(first.read_text())["meta"]["config"]["eval"] == {"split": ["train"]}
    again = tmp_path / "again"
    _ok(["redact", "--config", str(first), "--out", str(again)], capsys)
    assert (again / "redaction.json").read_bytes() == first.read_bytes()


def test_replay_probe_compare_is_byte_identical_and_writes_only_where_told(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = _episodes(tmp_path / "a.jsonl", [1.0, 0.0, 1.0, 1.0] * 5)
    b = _episodes(tmp_path / "b.jsonl", [1.0, 1.0, 0.0, 1.0] * 5)
    first = tmp_path / "first" / "compare.json"
    _ok(["probe", "compare", str(a), str(b), "--margin", "0.2", "--seed", "4", "--out",
         str(first.parent)], capsys)  # fmt: skip
    doc = json.loads(first.read_text())
    doc["meta"]["config"]["out"] = str(tmp_path / "chosen-by-the-file")  # as if recorded
    planted = tmp_path / "first" / "planted.json"
    planted.write_text(json.dumps(doc))
    before = sorted(p.name for p in tmp_path.iterdir())
    _ok(["probe", "compare", "--config", str(planted)], capsys)  # no --out: nothing written
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    again = tmp_path / "again"
    _ok(["probe", "compare", "--config", str(first), "--out", str(again)], capsys)
    assert (again / "compare.json").read_bytes() == first.read_bytes()


def test_replay_committed_probe_json_is_byte_identical(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study = tmp_path / "airline"
    shutil.copytree(REPO / "results" / "probe-tau2-scripted" / "airline", study,
                    ignore=shutil.ignore_patterns("logs", "report.*"))  # fmt: skip
    committed = (study / "probe.json").read_bytes()
    _ok(["probe", "analyze", "--config", str(study / "probe.json")], capsys)  # dir: its folder
    assert (study / "probe.json").read_bytes() == committed


def test_replay_probe_analyze_is_byte_identical(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study = tmp_path / "airline"
    shutil.copytree(REPO / "results" / "probe-tau2-scripted" / "airline", study,
                    ignore=shutil.ignore_patterns("logs", "report.*"))  # fmt: skip
    _ok(["probe", "analyze", str(study), "--n-boot", "100", "--margin", "0.05"], capsys)
    first = (study / "probe.json").read_bytes()
    assert json.loads(first)["meta"]["config"]["n_boot"] == 100
    _ok(["probe", "analyze", "--config", str(study / "probe.json")], capsys)
    assert (study / "probe.json").read_bytes() == first


def test_replay_faults_analyze_is_byte_identical(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "faults"
    shutil.copytree(REPO / "results" / "faults-qwen-k3", run,
                    ignore=shutil.ignore_patterns("report.*", "run.log"))  # fmt: skip
    _ok(["faults", "analyze", str(run)], capsys)
    first = (run / "faults.json").read_bytes()
    _ok(["faults", "analyze", "--config", str(run / "faults.json")], capsys)  # dir: its folder
    assert (run / "faults.json").read_bytes() == first


@pytest.mark.parametrize(
    ("command", "key", "value"),
    [("probe analyze", "n_boot", True), ("probe analyze", "n_boot", False),
     ("probe analyze", "margin", True), ("probe compare", "margin", True)],
)  # fmt: skip
def test_replay_boolean_where_a_number_is_recorded_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, key: str, value: bool
) -> None:
    if command == "probe compare":
        a = _episodes(tmp_path / "a.jsonl", [1.0, 0.0] * 5)
        _ok(["probe", "compare", str(a), str(a), "--out", str(tmp_path / "c")], capsys)
        good = tmp_path / "c" / "compare.json"
    else:
        shutil.copytree(REPO / "results" / "probe-tau2-scripted" / "airline", tmp_path / "c",
                        ignore=shutil.ignore_patterns("logs", "report.*"))  # fmt: skip
        good = tmp_path / "c" / "probe.json"
    before = good.read_bytes()
    doc = json.loads(before)
    doc["meta"]["config"][key] = value
    bad = tmp_path / "c" / "bad.json"
    bad.write_text(json.dumps(doc))
    out = tmp_path / "o"
    extra = ["--out", str(out)] if command == "probe compare" else []
    assert main([*command.split(), "--config", str(bad), *extra]) == 2
    err = capsys.readouterr().err.strip()
    flag = "--" + key.replace("_", "-")
    assert err == (
        f"toolaudit: error: {bad}, field 'meta.config.{key}': {str(value).lower()}, but "
        f"{flag} takes a value, not a switch"
    )
    assert not out.exists() and good.read_bytes() == before


def test_replay_probe_run_is_byte_identical(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``probe run --config probe.json`` reruns the study: policies and conditions come
    back comma-joined, the task list as --tasks N, n_seeds as --seeds."""
    first, again = tmp_path / "first", tmp_path / "again"
    _ok(["probe", "run", "--tasks", "3", "--seeds", "1", "--policies", "careful,hasty",
         "--out", str(first)], capsys)  # fmt: skip
    _ok(["probe", "run", "--config", str(first / "probe.json"), "--out", str(again)], capsys)
    for name in ("probe.json", "records.jsonl", "run_config.json"):
        assert (again / name).read_bytes() == (first / name).read_bytes(), name


def test_replay_probe_run_on_an_inspect_task_reruns_the_same_study(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The harness study replays too; its probe.json differs only in the measured seconds
    per run (a cost, not a result)."""
    pytest.importorskip("inspect_evals")
    first, again = tmp_path / "first", tmp_path / "again"
    _ok(["probe", "run", "--harness", "inspect", "--task", "inspect_evals/tau2_telecom",
         "--limit", "2", "--conditions", "original,tool_rename", "--out", str(first)], capsys)  # fmt: skip
    _ok(["probe", "run", "--config", str(first / "probe.json"), "--out", str(again)], capsys)
    for name in ("records.jsonl", "run_config.json"):
        assert (again / name).read_bytes() == (first / name).read_bytes(), name

    def results(folder: Path) -> str:
        text = (folder / "probe.json").read_text(encoding="utf-8")
        return "\n".join(line for line in text.splitlines() if '"seconds_per_run"' not in line)

    assert results(again) == results(first)


def test_replay_faults_run_is_byte_identical(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], shared_data: Path
) -> None:
    """``faults run --config faults.json`` reruns the audit: the rows and the results are
    byte for byte the first run's (a one-layer random Qwen2 with the embedded Qwen's
    tokenizer saved as an ``hf:`` folder; one task at k = 0)."""
    import sys

    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        from _tiny import tiny_qwen
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    model = tmp_path / "tiny"
    lm = tiny_qwen()
    lm.model.save_pretrained(str(model))
    lm.tokenizer.save_pretrained(str(model))
    first, again = tmp_path / "first", tmp_path / "again"
    _ok(["faults", "run", "--model", f"hf:{model}", "--tasks", "1", "--k-max", "0",
         "--data-root", str(shared_data), "--out", str(first)], capsys)  # fmt: skip
    _ok(["faults", "run", "--config", str(first / "faults.json"), "--out", str(again)], capsys)
    for name in ("faults.json", "rows.jsonl", "run_config.json", "census.json"):
        assert (again / name).read_bytes() == (first / name).read_bytes(), name
