"""Every command that runs an audit reaches it through the registry's ``run_audit``, with
its audit's typed config (issue 28: one front door per audit). A spy stands in for
``run_audit`` and stops the command there, so no model is loaded and nothing runs."""

from __future__ import annotations

from pathlib import Path

import pytest

import toolaudit.audits
from toolaudit.cli.main import main
from toolaudit.datasets import make_tcr_shortcut
from toolaudit.traces import write_jsonl


class _Reached(BaseException):
    """Raised by the spy: past ``main``'s error handling, which catches Exception."""


@pytest.fixture(scope="module")
def examples(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("tcr") / "examples.jsonl"
    write_jsonl(path, make_tcr_shortcut(scale=0.02, seed=1))
    return path


def _retail(shared_data: Path, name: str) -> str:
    return str(shared_data / "tau2" / "simulations" / name)


CASES = [
    ("faults", lambda ex, out, data: ["faults", "run", "--out", out, "--domain", "mini"],
     "FaultsAuditConfig", None),
    ("leakage", lambda ex, out, data: ["leakage", ex, "--out", out], "LeakageAuditConfig", None),
    ("redaction", lambda ex, out, data: ["redact", ex, "--out", out, "--model", "sklearn:x"],
     "RedactionStudyConfig", None),
    ("probe", lambda ex, out, data: ["probe", "run", "--out", out, "--tasks", "1"],
     "ProbeStudyConfig", "probe.json"),
    ("probe_compare",
     lambda ex, out, data: ["probe", "compare",
                            _retail(data, "retail__gpt-4.1__user-gpt-4.1__test40x1.json"),
                            _retail(data, "retail__ft-gpt-4.1-sft__user-gpt-4.1__test40x1.json"),
                            "--out", out],
     "ProbeCompareConfig", "compare.json"),
    ("probe", lambda ex, out, data: ["probe", "run", "--harness", "tau2", "--domain", "retail",
                                     "--limit", "1", "--out", out],
     "Tau2StudyConfig", "probe.json"),
    ("traces", lambda ex, out, data: ["demo", "--only", "traces", "--out", out], None, None),
]  # fmt: skip


@pytest.mark.parametrize(("name", "argv", "config_type", "results_file"), CASES,
                         ids=[c[2] or c[0] for c in CASES])  # fmt: skip
def test_audit_commands_reach_their_audit_through_run_audit(
    monkeypatch, tmp_path, examples, shared_data, name, argv, config_type, results_file
):
    seen: list[tuple[str, str | None, str | None]] = []

    def spy(audit: str, out_dir: Path, *, config=None, results_file=None, **_: object):
        seen.append((audit, type(config).__name__ if config is not None else None, results_file))
        raise _Reached

    monkeypatch.setattr(toolaudit.audits, "run_audit", spy)
    import toolaudit.cli._demo as demo

    monkeypatch.setattr(demo, "run_audit", spy)  # the demo imports it at module level
    with pytest.raises(_Reached):
        main(argv(str(examples), str(tmp_path / "out"), shared_data))
    if config_type is None:  # the demo: each audit's own demo configuration
        assert seen[0][0] == name
    else:
        assert seen == [(name, config_type, results_file)]
