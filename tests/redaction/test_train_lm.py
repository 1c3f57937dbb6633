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


def test_committed_lm_scores_options_through_the_token_trie_as_one_pass_does() -> None:
    """The committed Llama-architecture LM with redact's default --scoring options ended in
    "AttributeError: 'dict' object has no attribute 'ndim'": the trie scorer gave Llama a
    per-layer-type mask mapping its forward pass does not take (issue 57)."""
    from toolaudit.models._prefix import naive_logprobs

    folder = Path(__file__).resolve().parents[2] / "results" / "redact-lm" / "model"
    lm = load_model(f"hf:{folder}", device="cpu")
    ctx = "<tool>pdb 2abc peptide GILGFVFTL</tool> Does it bind? <answer>"
    requests = [(ctx, "1</answer>"), (ctx, "0</answer>"), ("<tool>pdb 1xyz</tool>", " 0")]
    got = lm.loglikelihood(requests)
    tok = lm.tokenizer  # type: ignore[attr-defined]
    for (c, k), g in zip(requests, got, strict=True):
        ids = tok(c, add_special_tokens=False)["input_ids"]
        cont = tok(k, add_special_tokens=False)["input_ids"]
        assert g == pytest.approx(naive_logprobs(lm.model, ids, cont), abs=1e-4)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("damage", "message"),
    [("truncate", "cannot load the model (SafetensorError: "),
     ("list_config", "cannot load the model (AttributeError: 'list' object has no attribute"),
     ("vocabulary", "its tokenizer has 151,936 tokens but the model's embedding has 1,026 rows")],
)  # fmt: skip
def test_a_damaged_lm_folder_is_one_line_not_an_unexpected_error(
    tcr_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str, message: str
) -> None:
    import shutil

    from toolaudit.models import embedded_model_dir

    folder = tmp_path / "lm"
    shutil.copytree(Path(__file__).resolve().parents[2] / "results" / "redact-lm" / "model", folder)
    if damage == "truncate":
        with (folder / "model.safetensors").open("r+b") as fh:
            fh.truncate(20_000)
    elif damage == "list_config":
        (folder / "tokenizer_config.json").write_text("[]\n")
    else:  # another model's tokenizer
        qwen = embedded_model_dir("qwen")
        for name in ("tokenizer.json", "tokenizer_config.json"):
            shutil.copy(qwen / name, folder / name)
    argv = ["redact", str(tcr_dir), "--out", str(tmp_path / "red"), "--model", f"hf:{folder}",
            "--max-tool-lines", "3", "--limit", "8"]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err and "unexpected" not in err
