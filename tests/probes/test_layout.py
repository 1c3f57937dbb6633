"""The layout of ``toolaudit.probes`` (issue 53): a one-way house.

Inside ``probes/`` the analysis never imports a harness; a harness never imports the
analysis, the judges, the report, a study or a contract; the judges read Episodes, not
harness internals; the agents import no harness. Every import counts (also inside a
function or under ``TYPE_CHECKING``); a failure names the file, the line and the import.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.audits.test_import_graph import _imported

PROBES = Path(__file__).resolve().parents[2] / "src" / "toolaudit" / "probes"

#: room -> the rooms of ``probes`` it must never import, and why.
FORBIDDEN: dict[str, dict[str, str]] = {
    "analysis": {
        room: "the analysis reads records through a reader it is given, never a harness"
        for room in ("harnesses", "study", "contracts", "reports", "judges")
    },
    "harnesses": {
        room: "a harness runs and reads back runs; what is made of them lives above it"
        for room in ("analysis", "judges", "reports", "study", "contracts")
    },
    "judges": {
        room: "a judge reads Episodes, not a harness's internals or a study"
        for room in ("harnesses", "study", "contracts", "reports")
    },
    "agents": {
        room: "an agent decides from what it is shown; the harness wraps it"
        for room in ("harnesses", "analysis", "judges", "reports", "study", "contracts")
    },
    "reports": {
        room: "a report renders an analysed result" for room in ("harnesses", "study", "contracts")
    },
    "_seam": {
        room: "the seam is the bottom floor"
        for room in ("harnesses", "analysis", "judges", "reports", "study", "contracts", "agents")
    },
    "_mutations": {
        room: "the shared mutations sit beside the harnesses, below everything"
        for room in ("harnesses", "analysis", "judges", "reports", "study", "contracts", "agents")
    },
}


def _room(module: str) -> str | None:
    parts = module.split(".")
    if parts[:2] != ["toolaudit", "probes"] or len(parts) < 3:
        return None
    return parts[2]


def wrong_way_imports(root: Path) -> list[str]:
    """``probes/FILE:LINE imports MODULE: ROOM never imports OTHER (why)`` for every import
    that goes the wrong way through the house."""
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        own = rel.parts[0].removesuffix(".py")
        rules = FORBIDDEN.get(own, {})
        for line, module in sorted(set(_imported(ast.parse(path.read_text(encoding="utf-8"))))):
            other = _room(module)
            if other in rules:
                found.append(
                    f"probes/{rel.as_posix()}:{line} imports {module}: "
                    f"{own} never imports {other} ({rules[other]})"
                )
    return found


def test_probes_imports_go_one_way() -> None:
    wrong = wrong_way_imports(PROBES)
    assert not wrong, "\n".join(wrong)


def test_checker_names_an_analysis_module_that_imports_a_harness(tmp_path: Path) -> None:
    (tmp_path / "analysis").mkdir()
    (tmp_path / "analysis" / "_gaps.py").write_text(
        "from toolaudit.probes._seam import RecordReader\n"
        "def f():\n    from toolaudit.probes.harnesses.inspect._records import INSPECT_READER\n"
    )
    assert wrong_way_imports(tmp_path) == [
        "probes/analysis/_gaps.py:3 imports toolaudit.probes.harnesses.inspect._records: "
        "analysis never imports harnesses (the analysis reads records through a reader it "
        "is given, never a harness)",
        "probes/analysis/_gaps.py:3 imports toolaudit.probes.harnesses.inspect._records."
        "INSPECT_READER: analysis never imports harnesses (the analysis reads records "
        "through a reader it is given, never a harness)",
    ]


def test_probes_top_level_is_a_few_rooms() -> None:
    entries = sorted(p.name for p in PROBES.iterdir() if p.name != "__pycache__")
    assert len(entries) <= 10, entries


def test_no_probes_module_or_class_is_a_sprawl() -> None:
    """No module over 450 lines, no class over 150 lines, and every module opens with a
    docstring that says what lives there."""
    too_long = []
    for path in sorted(PROBES.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        rel = path.relative_to(PROBES).as_posix()
        tree = ast.parse(text)
        if len(text.splitlines()) > 450:
            too_long.append(f"{rel}: {len(text.splitlines())} lines")
        if not ast.get_docstring(tree):
            too_long.append(f"{rel}: no module docstring")
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.end_lineno - node.lineno + 1 > 150:
                too_long.append(
                    f"{rel}: class {node.name} {node.end_lineno - node.lineno + 1} lines"
                )
    assert too_long == []
