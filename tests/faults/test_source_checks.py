"""``faults run --source FILE`` validates the file before any model loads (issue 43):
a site record of the wrong shape, a JSON return nested too deeply, or a run that
appears twice is refused in one line, in seconds. The model spec points nowhere, so a
check that came after the model would fail on the model instead."""

from __future__ import annotations

import copy
import json
import time
from pathlib import Path
from typing import Any

import pytest

from toolaudit.cli.main import main

NO_MODEL = "hf:/nonexistent/toolaudit-model"
SIMS = "tau2/simulations/retail__gpt-4.1__user-gpt-4.1__test40x1.json"


@pytest.fixture(scope="module")
def doc(shared_data: Path) -> dict[str, Any]:
    return json.loads((shared_data / SIMS).read_text(encoding="utf-8"))


def _site(sim: dict[str, Any]) -> dict[str, Any]:
    """The first get_order_details return of a simulation (its tool message)."""
    return next(
        m for m in sim["messages"]
        if m.get("role") == "tool" and str(m.get("content", "")).startswith('{"order_id"')
    )  # fmt: skip


def _first_sim(doc: dict[str, Any]) -> dict[str, Any]:
    return next(s for s in doc["simulations"] if str(s["task_id"]) == "40")


def _break_user(doc: dict[str, Any]) -> None:
    msg = _site(_first_sim(doc))
    record = json.loads(msg["content"])
    msg["content"] = json.dumps({**record, "user_id": ["not", "a", "string"]})


def _break_status(doc: dict[str, Any]) -> None:
    msg = _site(_first_sim(doc))
    msg["content"] = json.dumps({**json.loads(msg["content"]), "status": 5})


def _nest(doc: dict[str, Any]) -> None:
    _site(_first_sim(doc))["content"] = '{"a":' * 5000 + "1" + "}" * 5000


def _duplicate(doc: dict[str, Any]) -> None:
    doc["simulations"].append(copy.deepcopy(_first_sim(doc)))


@pytest.mark.parametrize(
    ("edit", "expect"),
    [
        (_break_user, "get_order_details return.user_id': expected a string, got a list"),
        (_break_status, "get_order_details return.status': expected a string, got an integer"),
        (_nest, "JSON nested too deeply"),
        (_duplicate, "the run of task '40', trial 0 appears twice"),
    ],
)
def test_faults_source_is_validated_before_the_model(
    doc: dict[str, Any], edit: Any, expect: str, tmp_path: Path, shared_data: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    bad = copy.deepcopy(doc)
    edit(bad)
    src = tmp_path / "bad.json"
    src.write_text(json.dumps(bad), encoding="utf-8")
    out = tmp_path / "out"
    start = time.monotonic()
    code = main(["faults", "run", "--source", str(src), "--out", str(out), "--tasks", "1",
                 "--model", NO_MODEL, "--data-root", str(shared_data)])  # fmt: skip
    elapsed = time.monotonic() - start
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert str(src) in err[0] and expect in err[0]
    assert elapsed < 5 and not out.exists()
