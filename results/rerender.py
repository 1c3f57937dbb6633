"""Re-render every committed probe and judge study from its own files with the code as it
is now, and compare with what is committed (issue 53: a refactoring changes no figure).

Each study folder is copied under build/ at the same depth (so the relative paths its
run_config.json records still resolve) and analysed there (``probe analyze``
for a study holding ``probe.json``, ``probe parity`` for each ``parity/`` folder, the
``--partial`` analysis for a judge study still running); nothing under ``results/`` is
written, and no model is called (the analysis reads the records, the rescored rewards in
them and the verdicts already given). The JSON is compared whole, except ``meta.versions``
and ``meta.command`` (the package version and the command line that rendered it) and a
parity's study folders (paths relative to where it was written), and the report's Markdown
line by line. Prints one line per study and exits 1 when any differs.

    .venv/bin/python results/rerender.py            # every study
    .venv/bin/python results/rerender.py probe-llm  # the folders whose path contains it
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent
ROOT = RESULTS.parent
TOOLAUDIT = [str(ROOT / ".venv" / "bin" / "toolaudit"), "-q"]
IGNORED_META = ("versions", "command")


def _json(path: Path) -> Any:
    doc = json.loads(path.read_text(encoding="utf-8"))
    for key in IGNORED_META:
        doc.get("meta", {}).pop(key, None)
    if path.name == "parity.json":  # its folders, relative to where it was written
        for side in ("a", "b"):
            if isinstance(doc.get(side), dict):
                doc[side].pop("folder", None)
            doc.get("meta", {}).get("config", {}).pop(side, None)
            (doc.get("meta", {}).get("inputs", {}).get(side) or {}).pop("path", None)
        doc.get("meta", {}).get("config", {}).pop("out", None)
    return doc


def _first_difference(a: Any, b: Any, where: str = "") -> str | None:
    if type(a) is not type(b):
        return f"{where or '/'}: {type(a).__name__} vs {type(b).__name__}"
    if isinstance(a, dict):
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                return f"{where}/{key}: only in {'the new' if key in b else 'the committed'}"
            diff = _first_difference(a[key], b[key], f"{where}/{key}")
            if diff:
                return diff
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{where}: {len(a)} vs {len(b)} items"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            diff = _first_difference(x, y, f"{where}/{i}")
            if diff:
                return diff
        return None
    return None if a == b else f"{where}: {a!r} vs {b!r}"


def _compare(committed: Path, new: Path) -> str | None:
    diff = _first_difference(_json(committed), _json(new))
    if diff:
        return f"{committed.name} {diff}"
    for md in ("report.md",):
        old_md, new_md = committed.parent / md, new.parent / md
        if old_md.is_file() and new_md.is_file() and old_md.read_text() != new_md.read_text():
            old_lines, new_lines = old_md.read_text().splitlines(), new_md.read_text().splitlines()
            n = next((i for i, (x, y) in enumerate(zip(old_lines, new_lines, strict=False)) if x != y),
                     min(len(old_lines), len(new_lines)))  # fmt: skip
            return f"{md} line {n + 1} differs"
    return None


def _run(argv: list[str]) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[1:])}: {done.stderr.strip().splitlines()[-1:]}")


def _judge_options(folder: Path) -> list[str]:
    """The study's own judge options (run_config.json): its judge resumes from the
    committed verdicts and makes no call."""
    config = json.loads((folder / "run_config.json").read_text(encoding="utf-8"))
    if not config.get("judge_model"):
        return []
    out = ["--judge-model", config["judge_model"]]
    for key, flag in (("judge_temperature", "--judge-temperature"),
                      ("judge_repeats", "--judge-repeats"), ("judge_records", "--judge-records"),
                      ("judge_prompt", "--judge-prompt")):  # fmt: skip
        if config.get(key) is not None:
            out += [flag, str(config[key])]
    if config.get("judge_views"):
        out += ["--judge-views", ",".join(config["judge_views"])]
    return out


def _beside(folder: Path, what: str) -> Path:
    """A scratch folder at the depth of ``folder`` under build/ (recorded relative paths,
    such as ``../../../shared/data``, resolve to the same place from it)."""
    depth = len(folder.relative_to(ROOT).parts)
    out = ROOT.joinpath("build", *(["rerender"] * (depth - 2)), f"rerender-{what}")
    shutil.rmtree(out, ignore_errors=True)
    return out


def rerender(folder: Path) -> list[tuple[str, str | None]]:
    """(what, difference or None) for each rendering of one study folder."""
    out: list[tuple[str, str | None]] = []
    rel = folder.relative_to(ROOT)
    try:
        _rerender(folder, rel, out)
    finally:
        for what in ("study", "parity", "judge"):
            shutil.rmtree(_beside(folder, what), ignore_errors=True)
    return out


def _rerender(folder: Path, rel: Path, out: list[tuple[str, str | None]]) -> None:
    if (folder / "probe.json").is_file() and (folder / "records.jsonl").is_file():
        copy = _beside(folder, "study")
        shutil.copytree(folder, copy, ignore=shutil.ignore_patterns("parity"))
        report = ["--report"] if (folder / "report.md").is_file() else []
        _run([*TOOLAUDIT, "probe", "analyze", str(copy), *report, *_judge_options(folder)])
        out.append((f"{rel}/probe.json", _compare(folder / "probe.json", copy / "probe.json")))
        shutil.rmtree(copy)
    parity = folder / "parity" / "parity.json"
    if parity.is_file():
        doc = json.loads(parity.read_text(encoding="utf-8"))
        a, b = ((parity.parent / doc[side]["folder"]).resolve() for side in ("a", "b"))
        copy = _beside(folder, "parity")
        _run([*TOOLAUDIT, "probe", "parity", str(a), str(b), "--out", str(copy), "--report"])
        out.append((f"{rel}/parity/parity.json", _compare(parity, copy / "parity.json")))
        shutil.rmtree(copy)
    if (folder / "verdicts.jsonl").is_file() and (folder / "command.sh").is_file() and not (
        folder / "probe.json"
    ).is_file():
        copy = _beside(folder, "judge")
        shutil.copytree(folder, copy)
        # the study's own command, run from the repository root into the copy, with
        # --partial: the verdicts so far analysed into copy/partial/, no judge asked
        script = (folder / "command.sh").read_text(encoding="utf-8")
        script = script.replace('cd "$(dirname "$0")/../.."', f"cd {ROOT}")
        script = script.replace(f"--out {rel}", f"--out {copy}")
        done = subprocess.run(["bash", "-c", script, "command.sh", "--partial", "-q"],
                              capture_output=True, text=True, cwd=ROOT)  # fmt: skip
        if done.returncode != 0 and "nothing to analyse" in done.stderr:
            out.append((f"{rel} (--partial: no record has every verdict yet)", None))
            return
        if done.returncode != 0:
            raise RuntimeError(f"{rel}/command.sh --partial: {done.stderr.strip()[-300:]}")
        result = folder / "partial" / "judge_audit.json"
        if result.is_file():
            out.append((f"{rel}/partial/judge_audit.json",
                        _compare(result, copy / "partial" / "judge_audit.json")))  # fmt: skip
        else:
            out.append((f"{rel} (--partial analysed; no partial/ committed to compare)", None))
        shutil.rmtree(copy)


def main(argv: list[str]) -> int:
    wanted = argv[1:]
    folders = sorted(
        {p.parent for name in ("probe.json", "verdicts.jsonl") for p in RESULTS.rglob(name)}
        - {p.parent for p in RESULTS.rglob("parity.json")}
    )
    folders = [f for f in folders if not wanted or any(w in str(f) for w in wanted)]
    failed = 0
    for folder in folders:
        try:
            rows = rerender(folder)
        except RuntimeError as exc:
            rows = [(str(folder.relative_to(ROOT)), f"failed: {exc}")]
        for what, diff in rows:
            failed += diff is not None
            print(f"{'differs' if diff else 'same':<8}{what}" + (f": {diff}" if diff else ""),
                  flush=True)  # fmt: skip
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
