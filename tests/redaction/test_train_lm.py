"""The controlled benchmark's language model (issue 40): a tiny version trained here in
seconds, loaded through ``hf:`` and audited by ``toolaudit redact`` in generation mode.
Learning is not checked at this size (a few updates); the contract is."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolaudit.cli.main import main
from toolaudit.datasets import make_tcr_shortcut
from toolaudit.errors import ConfigError
from toolaudit.models import load_model
from toolaudit.redaction import LMTrainConfig, train_controlled_lm
from toolaudit.traces import Example, write_jsonl

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("tokenizers")


@pytest.fixture(scope="module")
def tcr_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("tcr-lm")
    write_jsonl(d / "examples.jsonl", make_tcr_shortcut(scale=0.01, seed=3))
    return d


def _subset(examples: list[Example]) -> list[Example]:
    """A few rows of each label in the fit split and in the test split."""
    keep: list[Example] = []
    for split, n in (("train", 12), ("test", 6)):
        for label in (0, 1):
            rows = [e for e in examples if e.split == split and e.label == label]
            keep += [e for e in rows if split == "test" or e.group == "C0"][:n]
    return keep


def test_train_controlled_lm_cli_folder_runs_redact_through_hf(
    tcr_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lm = tmp_path / "lm"
    argv = ["models", "train-controlled", str(tcr_dir), "--kind", "lm", "--out", str(lm),
            "--size", "tiny", "--steps", "4", "--max-tool-lines", "3", "--n-boot", "100",
            "--json"]  # fmt: skip
    assert main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["spec"] == f"hf:{lm}"
    record = json.loads((lm / "training.json").read_text())
    assert record["schema_version"] == 1 and record["seed"] == 0
    assert record["config"]["steps"] == 4 and record["config"]["max_tool_lines"] == 3
    assert record["loss"]["steps"] == 4 and len(record["loss"]["curve"]) >= 2
    ev = record["eval"]
    assert ev["scoring"] == "generate" and ev["rows"] == 57 and 0.0 <= ev["valid_rate"] <= 1.0
    assert ev["ci95"][0] <= ev["auroc"] <= ev["ci95"][1]
    assert {"torch", "transformers", "tokenizers", "toolaudit"} <= set(record["versions"])
    model = load_model(f"hf:{lm}", device="cpu")
    assert model.identity.startswith(f"hf:{lm}@")
    # the answer tags are single tokens that decode back (the parser needs them)
    tok = model.tokenizer  # type: ignore[attr-defined]
    assert len(tok("<answer>", add_special_tokens=False)["input_ids"]) == 1
    assert tok.decode(tok("<answer>9</answer>")["input_ids"]) == "<answer>9</answer>"

    out = tmp_path / "red"
    argv = ["redact", str(tcr_dir), "--out", str(out), "--model", f"hf:{lm}",
            "--scoring", "generate", "--max-tool-lines", "3", "--limit", "8",
            "--n-boot", "50", "--json"]  # fmt: skip
    assert main(argv) == 0
    red = json.loads(capsys.readouterr().out)
    assert [v["name"] for v in red["variants"]] == ["original", "pdb_id", "peptide", "format"]
    assert all(v["valid_rate"] is not None for v in red["variants"])
    assert red["scoring"] == "generate" and red["rows"] == 8
    assert red["model"].startswith(f"hf:{lm}@")
    for name in ("redaction.json", "scores.jsonl", "report.md", "report.html"):
        assert (out / name).is_file(), name


def test_train_controlled_lm_same_seed_same_weights(tcr_dir: Path, tmp_path: Path) -> None:
    from toolaudit.traces import read_jsonl

    rows = _subset(list(read_jsonl(tcr_dir / "examples.jsonl", Example)))
    cfg = LMTrainConfig(size="tiny", steps=2, batch_size=2, max_tool_lines=2, n_boot=20)
    a = train_controlled_lm(rows, tmp_path / "a", config=cfg)
    b = train_controlled_lm(rows, tmp_path / "b", config=cfg)
    for name in ("model.safetensors", "tokenizer.json"):
        assert (a.folder / name).read_bytes() == (b.folder / name).read_bytes(), name
    assert a.summary["loss"]["curve"] == b.summary["loss"]["curve"]
    notrace = train_controlled_lm(
        rows, tmp_path / "c", config=LMTrainConfig(size="tiny", steps=1, trace=False, n_boot=20)
    )
    assert notrace.summary["config"]["trace"] is False
    assert notrace.summary["longest_sequence_tokens"] < a.summary["longest_sequence_tokens"]


def test_lm_train_config_names_bad_option() -> None:
    with pytest.raises(ConfigError, match="size"):
        LMTrainConfig(size="huge")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="steps"):
        LMTrainConfig(steps=0)
