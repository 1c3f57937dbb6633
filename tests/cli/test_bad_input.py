"""The bad-input matrix: every subcommand against every class of bad input and option.

Each case runs the CLI in-process and expects the error contract: exit code 2, exactly
one line on stderr naming the file and record (or the option and the value received),
and no traceback; a valid-but-unusual case expects a correct result instead. No case
loads a language model: cases that would reach one point ``--model`` at a path that does
not exist, so a missing check fails fast with the wrong message instead of running.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from toolaudit.cli.main import main
from toolaudit.traces import Example, ToolSection, write_jsonl

ESC = "\x1b"
LINK = "[link=http://evil.example]click[/link]"
MARKUP = "get_[/x]"
RED = f"{ESC}[31mred{ESC}[0m"
UNWRITABLE = "/proc/toolaudit-unwritable"  # nothing can be created under /proc
NO_MODEL = "hf:/nonexistent/toolaudit-model"  # any case that would load a model stops here


def _code(argv: list[str]) -> int:
    """The exit code of ``toolaudit ARGV`` run in-process (a usage error found while
    parsing options leaves ``main`` as ``SystemExit(2)``)."""
    try:
        return main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)


class F:
    """Paths of the shared bad-input files (attributes), built once per module."""

    root: Path


def _episode(task: str, tool: str, reward: float | None = 1.0, **extra: object) -> dict:
    return {
        "task_id": task,
        "messages": [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "c1", "name": tool, "arguments": {"x": 1}}],
            },
            {"role": "tool", "tool_call_id": "c1", "name": tool, "content": f"{tool} said ok"},
        ],
        "reward": reward,
        **extra,
    }


def _small_examples(tool_names: tuple[str, ...] = ("alpha", "beta")) -> list[Example]:
    out = []
    for i in range(40):
        label = i % 2
        tools = [
            ToolSection(name=tool_names[0], content=f"value {'hot' if label else 'cold'} {i}"),
            ToolSection(name=tool_names[1], content=f"noise {i % 5} filler text"),
        ]
        split = "train" if i < 28 else "test"
        out.append(Example(id=f"e{i}", label=label, group=f"G{i % 4}", split=split, tools=tools))
    return out


@pytest.fixture(scope="module")
def f(tmp_path_factory: pytest.TempPathFactory, shared_data: Path, frozen_tcr: Path) -> F:
    root = tmp_path_factory.mktemp("bad")
    ns = F()
    ns.root = root
    ns.shared = shared_data
    ns.retail = shared_data / "tau2/simulations/retail__gpt-4.1__user-gpt-4.1__test40x1.json"
    ns.retail_ft = (
        shared_data / "tau2/simulations/retail__ft-gpt-4.1-sft__user-gpt-4.1__test40x1.json"
    )
    ns.airline = shared_data / "tau2/simulations/airline__gpt-4.1__user-gpt-4.1__test20x1.json"

    def put(name: str, data: bytes | str) -> Path:
        p = root / name
        p.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
        return p

    good = json.dumps(_small_examples()[0].model_dump())
    ns.missing = root / "missing.jsonl"
    ns.empty = put("empty.jsonl", "")
    ns.blank = put("blank.jsonl", "\n  \n\t\n")
    ns.nonutf8 = put("nonutf8.jsonl", b'{"id": "\xff\xfe"}\n')
    ns.garbage = put("garbage.jsonl", "this is not json\n")
    ns.binary = put("binary.bin", bytes(range(256)) * 4)
    ns.truncated = put("truncated.jsonl", good + '\n{"id": "e1", "label": 1, "gro')
    ns.wrongtype = put(
        "wrongtype.jsonl", good + "\n" + good.replace('"label": 0', '"label": "yes"')
    )
    ns.listjson = put("list.json", "[1, 2, 3]\n")
    ns.folder = root / "a_folder"
    ns.folder.mkdir()
    ns.afile = put("afile.txt", "I am a file\n")
    # JMESPath expressions that compile but fail on a record
    ns.foreign = put("foreign.jsonl", '{"a": [1, 2], "label": 1, "text": "x"}\n')
    for name, expr in [("len", "length(`1`)"), ("fn", "foo(a)"), ("slice", "a[::0]"),
                       ("sort", "sort_by(a, &b)")]:  # fmt: skip
        setattr(
            ns, f"map_{name}", put(f"map_{name}.json", json.dumps({"id": expr, "label": "label"}))
        )
    ns.small = root / "small.jsonl"
    write_jsonl(ns.small, _small_examples())
    ns.hostile = root / "hostile.jsonl"
    write_jsonl(ns.hostile, _small_examples((RED, LINK)))
    ns.ep_markup = put("ep_markup.jsonl", json.dumps(_episode("t1", MARKUP)) + "\n")
    ns.ep_link = put("ep_link.jsonl", json.dumps(_episode("t1", LINK)) + "\n")
    ns.ep_esc = put("ep_esc.jsonl", json.dumps(_episode("t1", RED)) + "\n")
    ns.episodes = put(
        "episodes.jsonl",
        "".join(json.dumps(_episode(f"t{i}", "get_order")) + "\n" for i in range(4)),
    )
    bad_msgs = _episode("t1", "get_order")
    bad_msgs["messages"] = {"role": "user", "content": "hi"}
    ns.ep_truncated = put(
        "ep_truncated.jsonl", ns.episodes.read_text().splitlines()[0] + '\n{"task_id": "t9", "mess'
    )
    ns.esc_name = put(f"evil{ESC}[31mname.jsonl", "")  # hostile file names, empty files
    ns.newline_name = put("two\nlines.jsonl", "")
    ns.bytes_name = put("bad\udcffname.jsonl", "")  # a non-UTF-8 byte in the name
    ns.ep_msgdict = put("ep_msgdict.jsonl", json.dumps(bad_msgs) + "\n")
    doc = json.loads(ns.retail.read_text(encoding="utf-8"))
    doc["simulations"][0]["reward_info"]["reward"] = math.nan
    ns.nan_reward = put("nan_reward.json", json.dumps(doc))
    doc["simulations"][0]["reward_info"]["reward"] = 1.0
    doc["simulations"][1]["reward_info"]["reward_breakdown"]["DB"] = math.inf
    ns.inf_component = put("inf_component.json", json.dumps(doc))
    tb = json.loads(
        (
            shared_data / "tau-bench/retail__tool-calling__openai-model-masked__100x1.json"
        ).read_text()
    )
    tb[2]["info"]["reward_info"]["info"]["r_actions"] = -math.inf
    ns.tb_inf = put("tb_inf.json", json.dumps(tb))
    ns.compare_fail_on_bogus = put("compare_bogus.json", json.dumps({"meta": {
        "command": "probe compare",
        "config": {"a": str(ns.retail), "b": str(ns.retail_ft), "fail_on": ["nosuch"]}}}))  # fmt: skip
    ns.map_nan_threshold = put(
        "map_nan_threshold.json", '{"id": "a", "label": "label", "label_threshold": NaN}'
    )
    ns.map_list_id = put("map_list_id.json", json.dumps({"id": "a", "label": "label"}))
    ns.tcr = frozen_tcr
    ns.frozen = frozen_tcr / "frozen.joblib"
    ns.garbage_joblib = put("garbage.joblib", "not a pickle at all\n")
    ns.not_sqlite = put("not_sqlite.sqlite", "definitely not SQLite\n" * 10)
    ns.rows_trunc = root / "faults_trunc"
    ns.rows_trunc.mkdir()
    (ns.rows_trunc / "rows.jsonl").write_text('{"task": "1", "arm": "cle')
    ns.verdicts_trunc = put(
        "verdicts.jsonl",
        json.dumps(
            {"judge": "j", "view": "original", "repeat": 0, "record_id": "r", "verdict": "pass"}
        )
        + '\n{"judge": "j", "vi',
    )
    return ns


@dataclass(frozen=True)
class Case:
    """One matrix cell: the argv (built from the files and a fresh output folder), and
    the expected outcome: ``error`` (exit 2, one line holding every ``expect`` string)
    or ``ok`` (exit 0, stdout holding every ``expect`` string)."""

    id: str
    argv: Callable[[F, Path], list[str]]
    expect: tuple[str, ...] = ()
    ok: bool = False
    forbid: tuple[str, ...] = ()  # strings that must not appear in stdout
    waits_for: str = ""  # the helper whose fix this case needs (documentation only)
    before: Callable[[F, Path], list[str]] | None = None  # a run made first, same folder


def E(
    id: str,
    argv: Callable[[F, Path], list[str]],
    *expect: str,
    waits_for: str = "",
    before: Callable[[F, Path], list[str]] | None = None,
) -> Case:
    return Case(id, argv, tuple(expect), waits_for=waits_for, before=before)


def OK(
    id: str,
    argv: Callable[[F, Path], list[str]],
    *expect: str,
    forbid: tuple[str, ...] = (),
    waits_for: str = "",
) -> Case:
    return Case(id, argv, tuple(expect), ok=True, forbid=forbid, waits_for=waits_for)


def s(p: Path) -> str:
    return str(p)


# Files every data-reading command must refuse, with the strings its message must hold.
BAD_FILES: list[tuple[str, Callable[[F], Path], tuple[str, ...]]] = [
    ("missing", lambda f: f.missing, ("missing.jsonl",)),
    ("empty", lambda f: f.empty, ("empty.jsonl",)),
    ("blank", lambda f: f.blank, ("blank.jsonl",)),
    ("nonutf8", lambda f: f.nonutf8, ("nonutf8.jsonl", "line 1")),
    ("malformed", lambda f: f.garbage, ("garbage.jsonl",)),
    ("binary", lambda f: f.binary, ("binary.bin",)),
    ("truncated", lambda f: f.truncated, ("truncated.jsonl", "line 2")),
    ("wrongtype", lambda f: f.wrongtype, ("wrongtype.jsonl", "line 2", "label")),
    ("jsonlist", lambda f: f.listjson, ("list.json",)),
    ("directory", lambda f: f.folder, ("a_folder",)),
]

LEAK = ["--n-boot", "20", "--no-dilution", "--features", "word_1_2"]


def _file_cases() -> list[Case]:
    """Every bad file against every command that reads a data file."""
    commands: list[tuple[str, Callable[[F, Path, Path], list[str]], str]] = [
        ("traces-inspect", lambda f, p, o: ["traces", "inspect", s(p)], ""),
        ("traces-convert", lambda f, p, o: ["traces", "convert", s(p), "--out", s(o / "x.jsonl")], ""),
        ("leakage", lambda f, p, o: ["leakage", s(p), "--out", s(o), *LEAK], ""),
        ("redact", lambda f, p, o: ["redact", s(p), "--out", s(o), "--model", f"sklearn:{f.frozen}"], ""),
        ("train-controlled", lambda f, p, o: ["models", "train-controlled", s(p), "--out", s(o / "m.joblib")], ""),
        ("probe-compare-a", lambda f, p, o: ["probe", "compare", s(p), s(f.retail)], ""),
        ("probe-compare-b", lambda f, p, o: ["probe", "compare", s(f.retail), s(p)], ""),
        ("probe-reruns", lambda f, p, o: ["probe", "reruns", s(p)], ""),
        ("probe-judge", lambda f, p, o: ["probe", "judge", s(p)], ""),
        ("faults-source", lambda f, p, o: ["faults", "run", "--out", s(o), "--source", s(p), "--model", NO_MODEL], "issue 10"),
    ]  # fmt: skip
    cases = []
    for cmd, build, waits in commands:
        for kind, path, expect in BAD_FILES:
            # a folder is a valid input to some commands: redact (holds examples.jsonl),
            # train-controlled (same); there the message names examples.jsonl in it.
            if kind == "directory" and cmd in ("redact", "train-controlled"):
                expect = ("a_folder", "examples.jsonl")
            if kind in ("wrongtype", "truncated") and cmd.startswith(("probe", "faults")):
                # Example records are the wrong kind there: refused on line 1
                expect = (f"{kind}.jsonl",)
            cases.append(
                E(
                    f"{cmd}-{kind}",
                    lambda f, o, build=build, path=path: build(f, path(f), o),
                    *expect,
                    waits_for=waits,
                )
            )
    return cases


OPTION_CASES: list[Case] = [
    # global
    E("unknown-command", lambda f, o: ["nosuch"], "nosuch"),
    E("unknown-option", lambda f, o: ["traces", "inspect", s(f.small), "--bogus"], "--bogus"),
    E("missing-required", lambda f, o: ["leakage", s(f.small)], "--out"),
    # traces
    E("traces-format-bogus", lambda f, o: ["traces", "inspect", s(f.small), "--format", "x"], "format"),
    *[E(f"traces-mapping-eval-{name}", lambda f, o, name=name: ["traces", "convert", s(f.foreign), "--mapping", s(getattr(f, f"map_{name}")), "--out", s(o / "x.jsonl")],
        "foreign.jsonl, line 1", f"map_{name}.json", "fails on this record", why) for name, why in
      [("len", "JMESPathTypeError"), ("fn", "UnknownFunctionError"), ("slice", "slice step cannot be zero"), ("sort", "JMESPathTypeError")]],
    E("traces-mapping-missing", lambda f, o: ["traces", "inspect", s(f.small), "--mapping", s(f.missing)], "missing.jsonl"),
    E("traces-convert-out-dir", lambda f, o: ["traces", "convert", s(f.small), "--out", s(f.folder)], "--out", "a_folder"),
    E("traces-convert-out-missing-parent", lambda f, o: ["traces", "convert", s(f.small), "--out", s(o / "no" / "x.jsonl")], "--out", "does not exist"),
    E("traces-convert-out-under-file", lambda f, o: ["traces", "convert", s(f.small), "--out", s(f.afile / "x.jsonl")], "--out", "afile.txt"),
    E("traces-convert-threshold-nan", lambda f, o: ["traces", "convert", s(f.retail), "--out", s(o / "x.jsonl"), "--threshold", "nan"], "--threshold", "nan"),
    E("traces-messages-dict", lambda f, o: ["traces", "inspect", s(f.ep_msgdict)], "ep_msgdict.jsonl", "line 1", "messages", waits_for="issue 13"),
    OK("traces-hostile-markup", lambda f, o: ["traces", "inspect", s(f.ep_markup)], MARKUP, waits_for="issue 13"),
    OK("traces-hostile-link", lambda f, o: ["traces", "inspect", s(f.ep_link)], LINK, waits_for="issue 13"),
    OK("traces-hostile-esc", lambda f, o: ["traces", "inspect", s(f.ep_esc)], "red", forbid=(ESC,), waits_for="issue 13"),
    E("hostile-file-name-esc", lambda f, o: ["traces", "inspect", s(f.esc_name)], "evil\\x1b[31mname.jsonl"),
    E("hostile-file-name-newline", lambda f, o: ["traces", "inspect", s(f.newline_name)], "lines.jsonl"),  # newline escaped, one line
    E("hostile-file-name-bytes", lambda f, o: ["leakage", s(f.bytes_name), "--out", s(o)], "bad\\udcffname.jsonl"),
    E("hostile-file-name-redact", lambda f, o: ["redact", s(f.esc_name), "--out", s(o), "--model", f"sklearn:{f.frozen}"], "evil\\x1b[31mname.jsonl"),
    E("hostile-out-name", lambda f, o: ["datasets", "make", "tcr-shortcut", "--out", s(f.esc_name)], "--out", "evil\\x1b"),
    # datasets
    E("datasets-seed-negative", lambda f, o: ["datasets", "make", "tcr-shortcut", "--out", s(o), "--seed", "-1"], "--seed", "-1"),
    E("datasets-seed-text", lambda f, o: ["datasets", "make", "tcr-shortcut", "--out", s(o), "--seed", "one"], "--seed", "one"),
    E("datasets-seed-huge", lambda f, o: ["datasets", "make", "tcr-shortcut", "--out", s(o), "--seed", str(2**40)], "--seed"),
    E("datasets-scale-nan", lambda f, o: ["datasets", "make", "tcr-shortcut", "--out", s(o), "--scale", "nan"], "scale", "nan"),
    E("datasets-scale-inf", lambda f, o: ["datasets", "make", "tcr-shortcut", "--out", s(o), "--scale", "inf"], "scale", "inf"),
    E("datasets-scale-zero", lambda f, o: ["datasets", "make", "tcr-shortcut", "--out", s(o), "--scale", "0"], "scale", "0"),
    E("datasets-scale-big", lambda f, o: ["datasets", "make", "tcr-shortcut", "--out", s(o), "--scale", "5"], "scale", "5"),
    E("datasets-scale-text", lambda f, o: ["datasets", "make", "tcr-shortcut", "--out", s(o), "--scale", "half"], "scale", "half"),
    E("datasets-name-bogus", lambda f, o: ["datasets", "make", "nosuch", "--out", s(o)], "nosuch"),
    E("datasets-out-file", lambda f, o: ["datasets", "make", "tcr-shortcut", "--out", s(f.afile)], "--out", "afile.txt"),
    E("datasets-out-under-file", lambda f, o: ["datasets", "make", "tcr-shortcut", "--out", s(f.afile / "sub")], "--out", "afile.txt"),
    OK("datasets-out-markup-name", lambda f, o: ["datasets", "make", "tcr-shortcut", "--out", s(o / "o[/x]"), "--scale", "0.01"], "o[/x]"),
    OK("datasets-out-missing-parents", lambda f, o: ["datasets", "make", "tcr-shortcut", "--out", s(o / "a" / "b"), "--scale", "0.01", "--json"], "examples.jsonl"),
    # leakage
    E("leakage-n-jobs-0", lambda f, o: ["leakage", s(f.small), "--out", s(o), *LEAK, "--n-jobs", "0"], "n-jobs", "0", waits_for="issue 12"),
    E("leakage-n-boot-0", lambda f, o: ["leakage", s(f.small), "--out", s(o), "--no-dilution", "--n-boot", "0"], "n-boot", "0", waits_for="issue 12"),
    E("leakage-n-boot-negative", lambda f, o: ["leakage", s(f.small), "--out", s(o), "--no-dilution", "--n-boot", "-5"], "n-boot", "-5", waits_for="issue 12"),
    E("leakage-cv-folds-0", lambda f, o: ["leakage", s(f.small), "--out", s(o), *LEAK, "--cv-folds", "0"], "cv-folds", "0", waits_for="issue 12"),
    E("leakage-cv-folds-more-than-groups", lambda f, o: ["leakage", s(f.retail), "--out", s(o), *LEAK, "--cv-folds", "1000"], "cv-folds 1000", "40 groups", "--cv-folds 40 or fewer"),
    E("leakage-dilution-k-negative", lambda f, o: ["leakage", s(f.small), "--out", s(o), "--n-boot", "20", "--dilution-k", "-1"], "dilution-k", "-1", waits_for="issue 12"),
    E("leakage-dilution-seeds-0", lambda f, o: ["leakage", s(f.small), "--out", s(o), "--n-boot", "20", "--dilution-seeds", "0"], "dilution-seeds", "0", waits_for="issue 12"),
    E("leakage-threshold-nan", lambda f, o: ["leakage", s(f.retail), "--out", s(o), *LEAK, "--threshold", "nan"], "threshold", "nan", waits_for="issue 12"),
    E("leakage-threshold-inf", lambda f, o: ["leakage", s(f.retail), "--out", s(o), *LEAK, "--threshold", "inf"], "threshold", "inf", waits_for="issue 12"),
    E("leakage-threshold-5", lambda f, o: ["leakage", s(f.retail), "--out", s(o), *LEAK, "--threshold", "5"], "threshold", "5", waits_for="issue 12"),
    E("leakage-max-features-0", lambda f, o: ["leakage", s(f.small), "--out", s(o), *LEAK, "--max-features", "word_1_2=0"], "max-features", "word_1_2=0", waits_for="issue 12"),
    E("leakage-max-features-text", lambda f, o: ["leakage", s(f.small), "--out", s(o), *LEAK, "--max-features", "word_1_2=many"], "max-features", "word_1_2=many"),
    E("leakage-features-bogus", lambda f, o: ["leakage", s(f.small), "--out", s(o), "--features", "bogus"], "bogus"),
    E("leakage-out-file", lambda f, o: ["leakage", s(f.small), "--out", s(f.afile)], "--out", "afile.txt"),
    E("leakage-carrier-bogus", lambda f, o: ["leakage", s(f.small), "--out", s(o), "--n-boot", "20", "--carrier", "bogus"], "--carrier", "bogus", "alpha"),
    E("leakage-seed-negative", lambda f, o: ["leakage", s(f.small), "--out", s(o), *LEAK, "--seed", "-1"], "--seed", "-1"),
    E("leakage-min-df-0", lambda f, o: ["leakage", s(f.small), "--out", s(o), *LEAK, "--min-df", "0"], "--min-df", "'0'"),
    E("leakage-min-df-negative", lambda f, o: ["leakage", s(f.small), "--out", s(o), *LEAK, "--min-df", "-3"], "--min-df", "-3"),
    OK("leakage-word_1_2-retail", lambda f, o: ["leakage", s(f.retail), "--out", s(o), "--features", "word_1_2", "--n-boot", "20", "--dilution-k", "0", "1", "--dilution-seeds", "1"], "leakage.json", waits_for="issue 12"),
    OK("leakage-hostile-tool-names", lambda f, o: ["leakage", s(f.hostile), "--out", s(o), *LEAK], "\\x1b[31mred", LINK, forbid=(ESC,)),
    # redact
    E("redact-n-boot-0", lambda f, o: ["redact", s(f.tcr), "--out", s(o), "--model", f"sklearn:{f.frozen}", "--n-boot", "0"], "--n-boot", "'0'"),
    E("redact-n-boot-negative", lambda f, o: ["redact", s(f.tcr), "--out", s(o), "--model", f"sklearn:{f.frozen}", "--n-boot", "-5"], "--n-boot", "-5"),
    E("redact-batch-rows-0", lambda f, o: ["redact", s(f.tcr), "--out", s(o), "--model", f"sklearn:{f.frozen}", "--batch-rows", "0"], "--batch-rows", "'0'"),
    E("redact-limit-1", lambda f, o: ["redact", s(f.tcr), "--out", s(o), "--model", f"sklearn:{f.frozen}", "--limit", "1"], "--limit", "'1'"),
    E("redact-seed-negative", lambda f, o: ["redact", s(f.tcr), "--out", s(o), "--model", f"sklearn:{f.frozen}", "--seed", "-1"], "--seed", "-1"),
    E("redact-max-tool-lines-0", lambda f, o: ["redact", s(f.tcr), "--out", s(o), "--model", f"sklearn:{f.frozen}", "--max-tool-lines", "0"], "--max-tool-lines", "'0'"),
    E("redact-scoring-bogus", lambda f, o: ["redact", s(f.tcr), "--out", s(o), "--model", f"sklearn:{f.frozen}", "--scoring", "bogus"], "--scoring", "bogus"),
    E("redact_seeds-missing", lambda f, o: ["redact-seeds", s(o / "nope"), "--out", s(o)], "nope", "redaction.json"),
    E("redact_seeds-not-json", lambda f, o: ["redact-seeds", s(f.afile), "--out", s(o)], "afile.txt", "not JSON"),
    E("redact-out-file", lambda f, o: ["redact", s(f.tcr), "--out", s(f.afile), "--model", f"sklearn:{f.frozen}"], "--out", "afile.txt"),
    E("redact-tau2-file", lambda f, o: ["redact", s(f.retail), "--out", s(o), "--model", f"sklearn:{f.frozen}"], "retail__gpt-4.1__user-gpt-4.1__test40x1.json", "tau2", "traces convert"),
    E("redact-class-from-list", lambda f, o: ["redact", s(f.tcr), "--out", s(o), "--model", f"sklearn:{f.frozen}", "--class-from", s(f.listjson)], "list.json"),
    E("redact-class-from-missing", lambda f, o: ["redact", s(f.tcr), "--out", s(o), "--model", f"sklearn:{f.frozen}", "--class-from", s(f.missing)], "missing.jsonl"),
    E("redact-class-from-nonutf8", lambda f, o: ["redact", s(f.tcr), "--out", s(o), "--model", f"sklearn:{f.frozen}", "--class-from", s(f.nonutf8)], "nonutf8.jsonl"),
    E("redact-class-from-folder", lambda f, o: ["redact", s(f.tcr), "--out", s(o), "--model", f"sklearn:{f.frozen}", "--class-from", s(f.folder)], "a_folder", "leakage.json"),
    E("redact-cache-folder", lambda f, o: ["redact", s(f.tcr), "--out", s(o), "--model", f"sklearn:{f.frozen}", "--cache", s(f.folder)], "--cache", "a_folder"),
    E("redact-cache-missing-parent", lambda f, o: ["redact", s(f.tcr), "--out", s(o), "--model", f"sklearn:{f.frozen}", "--cache", s(o / "no" / "c.sqlite")], "--cache", "does not exist"),
    E("redact-cache-not-sqlite", lambda f, o: ["redact", s(f.tcr), "--out", s(o), "--model", f"sklearn:{f.frozen}", "--cache", s(f.not_sqlite)], "not_sqlite.sqlite", waits_for="issue 9"),
    E("redact-sklearn-missing", lambda f, o: ["redact", s(f.tcr), "--out", s(o), "--model", f"sklearn:{f.missing}"], "missing.jsonl", waits_for="issue 9"),
    E("redact-sklearn-garbage", lambda f, o: ["redact", s(f.tcr), "--out", s(o), "--model", f"sklearn:{f.garbage_joblib}"], "garbage.joblib", waits_for="issue 9"),
    E("redact-hf-missing", lambda f, o: ["redact", s(f.tcr), "--out", s(o), "--model", f"hf:{NO_MODEL}"], NO_MODEL, waits_for="issue 9"),
    E("redact-eval-bogus", lambda f, o: ["redact", s(f.tcr), "--out", s(o), "--model", f"sklearn:{f.frozen}", "--eval", "color=red"], "--eval key", "color"),
    # models
    E("models-score-sklearn-missing", lambda f, o: ["models", "score", f"sklearn:{f.missing}", "--context", "a", "--continuation", "5"], "missing.jsonl", waits_for="issue 9"),
    E("models-score-sklearn-garbage", lambda f, o: ["models", "score", f"sklearn:{f.garbage_joblib}", "--context", "a", "--continuation", "5"], "garbage.joblib", waits_for="issue 9"),
    E("models-score-hf-missing", lambda f, o: ["models", "score", f"hf:{NO_MODEL}", "--context", "a", "--continuation", "b"], NO_MODEL, waits_for="issue 9"),
    E("models-score-cache-folder", lambda f, o: ["models", "score", f"sklearn:{f.frozen}", "--context", "a", "--continuation", "b", "--cache", s(f.folder)], "cache", "a_folder", waits_for="issue 9"),
    E("models-score-cache-not-sqlite", lambda f, o: ["models", "score", f"sklearn:{f.frozen}", "--context", "a", "--continuation", "b", "--cache", s(f.not_sqlite)], "not_sqlite.sqlite", waits_for="issue 9"),
    E("models-score-spec-bogus", lambda f, o: ["models", "score", "nosuch:thing", "--context", "a", "--continuation", "b"], "nosuch"),
    E("models-generate-max-tokens-0", lambda f, o: ["models", "generate", f"sklearn:{f.frozen}", "--prompt", "hi", "--max-tokens", "0"], "--max-tokens", "'0'"),
    E("models-train-seed-negative", lambda f, o: ["models", "train-controlled", s(f.tcr), "--out", s(o / "m.joblib"), "--seed", "-1"], "--seed", "-1"),
    E("models-score-request-timeout-nan", lambda f, o: ["models", "score", "openai:m@http://127.0.0.1:9/v1", "--context", "a", "--continuation", "b", "--request-timeout", "nan"], "timeout", "nan", "allowed", waits_for="issue 9"),
    E("models-score-request-timeout-0", lambda f, o: ["models", "score", "openai:m@http://127.0.0.1:9/v1", "--context", "a", "--continuation", "b", "--request-timeout", "0"], "timeout", "0", "allowed", waits_for="issue 9"),
    E("models-train-out-folder", lambda f, o: ["models", "train-controlled", s(f.tcr), "--out", s(f.folder)], "--out", "a_folder"),
    # probe
    E("traces-convert-nan-reward", lambda f, o: ["traces", "convert", s(f.nan_reward), "--out", s(o / "x.jsonl")], "nan_reward.json", "simulations[0].reward_info.reward", "nan is not a finite number"),
    E("traces-inspect-inf-component", lambda f, o: ["traces", "inspect", s(f.inf_component)], "inf_component.json", "reward_breakdown.DB", "inf is not a finite number"),
    E("traces-inspect-taubench-inf-component", lambda f, o: ["traces", "inspect", s(f.tb_inf)], "tb_inf.json", "r_actions", "-inf is not a finite number"),
    E("leakage-nan-reward", lambda f, o: ["leakage", s(f.nan_reward), "--out", s(o), *LEAK], "nan_reward.json", "reward", "not a finite number"),
    E("faults-source-nan-reward", lambda f, o: ["faults", "run", "--out", s(o), "--source", s(f.nan_reward), "--model", NO_MODEL], "nan_reward.json", "reward", "not a finite number"),
    E("traces-mapping-threshold-nan", lambda f, o: ["traces", "convert", s(f.foreign), "--mapping", s(f.map_nan_threshold), "--out", s(o / "x.jsonl")], "map_nan_threshold.json", "label_threshold", "finite"),
    E("traces-mapping-id-selects-a-list", lambda f, o: ["traces", "convert", s(f.foreign), "--mapping", s(f.map_list_id), "--out", s(o / "x.jsonl")], "foreign.jsonl, line 1", "mapping 'id' must select one value"),
    E("probe-compare-nan-reward", lambda f, o: ["probe", "compare", s(f.nan_reward), s(f.retail_ft)], "nan_reward.json", "reward", waits_for="issue 11"),
    E("probe-compare-margin-5", lambda f, o: ["probe", "compare", s(f.retail), s(f.retail_ft), "--margin", "5"], "margin", "5", waits_for="issue 11"),
    E("probe-compare-margin-nan", lambda f, o: ["probe", "compare", s(f.retail), s(f.retail_ft), "--margin", "nan"], "margin", "nan", waits_for="issue 11"),
    E("probe-compare-margin-0", lambda f, o: ["probe", "compare", s(f.retail), s(f.retail_ft), "--margin", "0"], "margin", "0"),
    E("probe-compare-threshold-nan", lambda f, o: ["probe", "compare", s(f.retail), s(f.retail_ft), "--threshold", "nan"], "--threshold", "nan"),
    E("probe-compare-seed-negative", lambda f, o: ["probe", "compare", s(f.retail), s(f.retail_ft), "--seed", "-1"], "--seed", "-1"),
    E("probe-reruns-threshold-inf", lambda f, o: ["probe", "reruns", s(f.retail), "--threshold", "inf"], "--threshold", "inf"),
    E("probe-reruns-seed-negative", lambda f, o: ["probe", "reruns", s(f.retail), "--seed", "-1"], "--seed", "-1"),
    E("probe-judge-native-threshold-nan", lambda f, o: ["probe", "judge", s(f.verdicts_trunc), "--native-threshold", "nan"], "--native-threshold", "nan"),
    E("probe-run-seed-negative", lambda f, o: ["probe", "run", "--out", s(o), "--seed", "-1"], "--seed", "-1"),
    E("probe-compare-out-file", lambda f, o: ["probe", "compare", s(f.retail), s(f.retail_ft), "--out", s(f.afile)], "--out", "afile.txt"),
    E("probe-compare-episodes-truncated", lambda f, o: ["probe", "compare", s(f.ep_truncated), s(f.episodes)], "ep_truncated.jsonl", "line 2"),
    E("probe-reruns-episodes-truncated", lambda f, o: ["probe", "reruns", s(f.ep_truncated)], "ep_truncated.jsonl", "line 2"),
    E("traces-inspect-episodes-truncated", lambda f, o: ["traces", "inspect", s(f.ep_truncated)], "ep_truncated.jsonl", "line 2"),
    E("probe-analyze-verdicts-missing", lambda f, o: ["probe", "analyze", s(o), "--verdicts", s(f.missing)], "--verdicts", "missing.jsonl"),
    E("probe-judge-verdicts-truncated", lambda f, o: ["probe", "judge", s(f.verdicts_trunc)], "verdicts.jsonl", "line 2"),
    E("probe-analyze-episode-jsonl", lambda f, o: ["probe", "analyze", s(f.episodes)], "episodes.jsonl", waits_for="issue 11"),
    E("probe-analyze-empty-folder", lambda f, o: ["probe", "analyze", s(f.folder)], "a_folder"),
    E("probe-analyze-missing", lambda f, o: ["probe", "analyze", s(f.missing)], "missing.jsonl"),
    E("probe-run-n-jobs-0", lambda f, o: ["probe", "run", "--out", s(o), "--n-jobs", "0"], "n-jobs", "0"),
    E("probe-run-seeds-0", lambda f, o: ["probe", "run", "--out", s(o), "--seeds", "0"], "seeds", "0", waits_for="issue 11"),
    E("probe-run-other-seeds-resume", lambda f, o: ["probe", "run", "--out", s(o), "--seeds", "2", "--no-analyze"], "seeds", "1", "2",
      before=lambda f, o: ["probe", "run", "--out", s(o), "--seeds", "1", "--no-analyze"], waits_for="issue 11"),
    E("probe-run-model-missing", lambda f, o: ["probe", "run", "--out", s(o / "run"), "--policies", "llm", "--model", NO_MODEL], "/nonexistent/toolaudit-model", "no such model folder"),
    E("probe-compare-config-fail-on-bogus", lambda f, o: ["probe", "compare", "--config", s(f.compare_fail_on_bogus)], "compare_bogus.json", "meta.config.fail_on", "nosuch"),
    E("probe-run-out-file", lambda f, o: ["probe", "run", "--out", s(f.afile)], "--out", "afile.txt"),
    E("probe-run-suite-bogus", lambda f, o: ["probe", "run", "--out", s(o), "--suite", "nosuch"], "nosuch"),
    # faults (every case names a model path that does not exist, so none loads a model)
    E("faults-tasks-0", lambda f, o: ["faults", "run", "--out", s(o), "--tasks", "0", "--model", NO_MODEL], "tasks", "0", waits_for="issue 10"),
    E("faults-tasks-negative", lambda f, o: ["faults", "run", "--out", s(o), "--tasks", "-1", "--model", NO_MODEL], "tasks", "-1", waits_for="issue 10"),
    E("faults-k-max-negative", lambda f, o: ["faults", "run", "--out", s(o), "--k-max", "-1", "--model", NO_MODEL], "k-max", "-1", waits_for="issue 10"),
    E("faults-arms-bogus", lambda f, o: ["faults", "run", "--out", s(o), "--arms", "bogus", "--model", NO_MODEL], "bogus"),
    E("faults-data-root-typo", lambda f, o: ["faults", "run", "--out", s(o), "--data-root", s(f.root / "typo"), "--model", NO_MODEL], "data-root", "typo", waits_for="issue 10"),
    # valid but unusual: Episode JSONL whose runs have no fault site -> no task qualifies,
    # and the drop-outs are counted (never a silent empty result)
    OK("faults-source-episode-jsonl", lambda f, o: ["faults", "run", "--out", s(o), "--source", s(f.episodes), "--model", NO_MODEL, "--json"], '"qualifying_tasks": 0', '"no_site": 4', waits_for="issue 10"),
    E("faults-seed-negative", lambda f, o: ["faults", "run", "--out", s(o), "--seed", "-1", "--model", NO_MODEL], "--seed", "-1"),
    E("faults-failed-start-does-not-lock", lambda f, o: ["faults", "run", "--out", s(o), "--source", s(f.root / "typo2.json"), "--model", NO_MODEL], "typo2.json",
      before=lambda f, o: ["faults", "run", "--out", s(o), "--source", s(f.root / "typo1.json"), "--model", NO_MODEL], waits_for="issue 10"),
    E("faults-out-file", lambda f, o: ["faults", "run", "--out", s(f.afile), "--model", NO_MODEL], "--out", "afile.txt"),
    E("faults-analyze-missing", lambda f, o: ["faults", "analyze", s(f.missing)], "missing.jsonl"),
    E("faults-analyze-empty-folder", lambda f, o: ["faults", "analyze", s(f.folder)], "a_folder"),
    E("faults-analyze-truncated-only", lambda f, o: ["faults", "analyze", s(f.rows_trunc)], "faults_trunc", waits_for="issue 10"),
    # an output nothing can be written to (/proc: no file or folder can be created there),
    # refused in one line before any work
    *[E(f"{name}-out-unwritable", argv, "--out", "nothing can be created in '/proc'") for name, argv in [
        ("traces-convert", lambda f, o: ["traces", "convert", s(f.small), "--out", UNWRITABLE + ".jsonl"]),
        ("probe-run", lambda f, o: ["probe", "run", "--out", UNWRITABLE]),
        ("redact", lambda f, o: ["redact", s(f.tcr), "--out", UNWRITABLE, "--model", f"sklearn:{f.frozen}"]),
        ("datasets-make", lambda f, o: ["datasets", "make", "tcr-shortcut", "--out", UNWRITABLE]),
        ("probe-compare", lambda f, o: ["probe", "compare", s(f.retail), s(f.retail_ft), "--out", UNWRITABLE]),
        ("models-train", lambda f, o: ["models", "train-controlled", s(f.tcr), "--out", UNWRITABLE + ".joblib"]),
        ("leakage", lambda f, o: ["leakage", s(f.small), "--out", UNWRITABLE]),
    ]],
    # demo (only cases refused before any part runs)
    E("demo-out-file", lambda f, o: ["demo", "--out", s(f.afile)], "--out", "afile.txt"),
    E("demo-data-root-typo", lambda f, o: ["demo", "--out", s(o), "--data-root", s(f.root / "typo")], "data-root", "typo"),
    E("demo-only-bogus", lambda f, o: ["demo", "--out", s(o), "--only", "bogus"], "bogus"),
    E("demo-seed-negative", lambda f, o: ["demo", "--out", s(o), "--seed", "-1"], "--seed", "-1"),
]  # fmt: skip

CASES = _file_cases() + OPTION_CASES


def _run(argv: list[str]) -> int:
    """``main(argv)``; a usage error may also leave main() as SystemExit(2), like the
    console script does."""
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_matrix_cell(
    case: Case, f: F, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    if case.before is not None:
        _run(case.before(f, out_dir))
        capsys.readouterr()
    rc = _run(case.argv(f, out_dir))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    if case.ok:
        assert rc == 0, err
        for text in case.expect:
            assert text in out, (text, out[-2000:])
        for text in case.forbid:
            assert text not in out
        return
    assert rc == 2, (rc, err, out[-500:])
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    if case.id != "unknown-option":  # an option the parser lacks is not a check of it
        assert "unrecognized arguments" not in lines[0], lines[0]
    for text in case.expect:  # option names may be written n-boot or n_boot
        assert text.replace("_", "-") in lines[0].replace("_", "-"), (text, lines[0])
    assert ESC not in err


def test_bad_input_matrix_covers_every_command() -> None:
    from toolaudit.cli.main import commands

    prefixes = {c.id.split("-")[0].replace("_", "-") for c in CASES}
    assert set(commands()) <= prefixes | {"models"} and "train" in prefixes
    for kind, _, _ in BAD_FILES:
        assert sum(c.id.endswith(f"-{kind}") for c in CASES) >= 8, kind


def test_unexpected_exception_is_one_line_exit_1_with_pointer_to_v(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import toolaudit.cli._datasets as datasets_cli

    def boom(args: object) -> int:
        raise RuntimeError("kaboom\nsecond line \x1b[31m")

    monkeypatch.setattr(datasets_cli, "_list", boom)
    assert _code(["datasets", "list"]) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert "RuntimeError: kaboom" in err and "second line \\x1b[31m" in err and "-v" in err
    assert ESC not in err and "Traceback" not in err


def test_probe_compare_warns_when_domains_differ(
    f: F, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    # valid but unusual: airline tasks paired with retail tasks (issue 11 adds the warning)
    with caplog.at_level("WARNING"):
        rc = main(["probe", "compare", s(f.airline), s(f.retail)])
    err = capsys.readouterr().err + caplog.text
    assert rc in (0, 2) and "Traceback" not in err
    assert "airline" in err and "retail" in err


def test_traces_convert_never_leaves_a_partial_file(
    f: F, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "conv"
    target.mkdir()
    assert _code(["traces", "convert", s(f.truncated), "--out", s(target / "x.jsonl")]) == 2
    assert _code(["traces", "convert", s(f.small), "--out", s(target)]) == 2
    assert list(target.iterdir()) == []
    capsys.readouterr()


def test_verbose_logs_the_traceback_of_an_unexpected_exception(
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import toolaudit.cli._datasets as datasets_cli

    def boom(args: object) -> int:
        raise ZeroDivisionError("deep inside")

    monkeypatch.setattr(datasets_cli, "_list", boom)
    with caplog.at_level("DEBUG", logger="toolaudit"):
        assert _code(["-v", "datasets", "list"]) == 1
    record = next(r for r in caplog.records if r.exc_info)
    assert record.exc_info[0] is ZeroDivisionError
    assert "ZeroDivisionError: deep inside" in capsys.readouterr().err


def test_output_option_refused_before_anything_is_written(
    f: F, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = sorted(os.listdir(f.root))
    assert _code(["traces", "convert", s(f.small), "--out", s(f.folder)]) == 2
    assert sorted(os.listdir(f.root)) == before and not any(f.folder.iterdir())
    capsys.readouterr()


def test_a_model_that_cannot_load_leaves_no_run_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bad --model is refused before the run folder (and its run_config.json, which
    would pin the next, corrected command to the bad model) is written."""
    out = tmp_path / "run"
    assert _code(["probe", "run", "--out", s(out), "--policies", "llm", "--model", NO_MODEL]) == 2
    assert not out.exists()
    capsys.readouterr()


def test_hostile_tool_names_reach_reports_as_text(
    f: F, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "leak"
    assert _code(["leakage", s(f.hostile), "--out", s(out), *LEAK]) == 0
    capsys.readouterr()
    md = (out / "report.md").read_text(encoding="utf-8")
    page = (out / "report.html").read_text(encoding="utf-8")
    for text in (md, page):
        assert ESC not in text and "\\x1b[31mred" in text
    assert "[link=http://evil.example]click[/link]" in md  # no "](": not a Markdown link
    assert "<a href='http://evil" not in page and 'href="http://evil' not in page
    assert "\x1b" in (out / "leakage.json").read_text(encoding="utf-8") or "\\u001b" in (
        out / "leakage.json"
    ).read_text(encoding="utf-8")  # the results keep the data exactly (JSON-escaped)
