"""Property-based tests (hypothesis): the loaders and option parsing never fail in any
way other than the error contract, and safe text stays safe whatever it is given."""

from __future__ import annotations

import argparse
import html
import json
import math
import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolaudit.cli._validate import finite_float, int_at_least, positive_int, seed
from toolaudit.cli.main import main
from toolaudit.errors import ToolAuditError
from toolaudit.report import Section
from toolaudit.report._document import md_text, render_html, render_markdown, visible
from toolaudit.traces import detect_format, load_episodes, load_examples

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


def _drain(path: Path) -> None:
    """Read ``path`` with every loader; only ToolAuditError may escape."""
    for loader in (load_examples, load_episodes):
        try:
            for _ in loader(path):
                pass
        except ToolAuditError:
            pass
    try:
        detect_format(path)
    except ToolAuditError:
        pass


@FAST
@given(data=st.binary(max_size=400))
def test_loaders_any_bytes_raise_only_toolaudit_errors(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "x.jsonl"
        path.write_bytes(data)
        _drain(path)


@FAST
@given(records=st.lists(json_values, min_size=1, max_size=4))
def test_loaders_any_json_lines_raise_only_toolaudit_errors(records: list[object]) -> None:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "x.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
        _drain(path)


@FAST
@given(
    record=st.fixed_dictionaries(
        {"id": st.text(max_size=5), "label": json_values, "group": json_values},
        optional={"tools": json_values, "split": json_values, "meta": json_values},
    )
)
def test_example_loader_names_file_and_line_on_any_near_miss(record: dict) -> None:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "near.jsonl"
        path.write_text(json.dumps(record) + "\n", encoding="utf-8")
        try:
            list(load_examples(path, format="examples"))
        except ToolAuditError as exc:
            assert "near.jsonl" in str(exc)


@FAST
@given(text=st.text(max_size=30))
def test_int_validators_accept_exactly_the_integers_in_range(text: str) -> None:
    for low, parse in ((1, positive_int), (2, int_at_least(2))):
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is not None and value >= low:
            assert parse(text) == value
        else:
            with pytest.raises(argparse.ArgumentTypeError, match="allowed: an integer >= "):
                parse(text)
    try:
        ok = 0 <= int(text) < 2**32
    except ValueError:
        ok = False
    if ok:
        assert seed(text) == int(text)
    else:
        with pytest.raises(argparse.ArgumentTypeError):
            seed(text)


@FAST
@given(
    x=st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=10).map(lambda t: t),
    lo=st.floats(-10, 10),
    width=st.floats(0, 10),
)
def test_finite_float_returns_a_finite_value_in_range_or_refuses(
    x: float | str, lo: float, width: float
) -> None:
    parse = finite_float(low=lo, high=lo + width, low_open=True)
    try:
        value = parse(str(x))
    except argparse.ArgumentTypeError as exc:
        assert "allowed: a finite number in (" in str(exc)
        return
    assert math.isfinite(value) and lo < value <= lo + width


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(seed_text=st.text(max_size=8), scale=st.text(max_size=8))
def test_cli_option_parsing_is_exit_0_or_2_with_one_line(
    seed_text: str, scale: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # An existing file as --out makes every valid combination fail too, so nothing is
    # generated: the property is about how option errors are reported.
    blocker = tmp_path / "file"
    blocker.write_text("x")
    argv = ["datasets", "make", "tcr-shortcut", f"--seed={seed_text}", f"--scale={scale}"]
    rc = main([*argv, "--out", str(blocker)])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err


@FAST
@given(text=st.text(max_size=60))
def test_visible_text_is_one_line_without_control_characters(text: str) -> None:
    out = visible(text)
    assert all(c.isprintable() or c == " " for c in out)
    assert "\n" not in out and "\x1b" not in out


@FAST
@given(cells=st.lists(st.text(max_size=15), min_size=1, max_size=4))
def test_markdown_table_rows_keep_their_column_count(cells: list[str]) -> None:
    md = render_markdown(
        "t", [Section("s").table("cap", [f"c{i}" for i in range(len(cells))], [cells])]
    )
    row = md.splitlines()[-2]
    # a row has exactly one more unescaped "|" than it has cells
    unescaped = sum(1 for i, c in enumerate(row) if c == "|" and (i == 0 or row[i - 1] != "\\"))
    assert unescaped == len(cells) + 1
    assert "<" not in row.replace("&lt;", "") and "\x1b" not in md


@FAST
@given(text=st.text(max_size=60))
def test_html_report_has_no_raw_markup_or_control_bytes_from_content(text: str) -> None:
    page = render_html("t", [Section("s").text(text).table("c", ["h"], [[text]])])
    para = re.search(r"<h2 id='s0'>s</h2>\n<p>(.*?)</p>\n<div class='tw'>", page, re.S)
    assert para is not None
    # Inline Markdown is rendered (code spans, emphasis), never other markup or links
    assert set(re.findall(r"</?([a-zA-Z][a-zA-Z0-9]*)", para[1])) <= {"em", "strong", "code"}
    if not any(c in text for c in "*_`\\[]<>&'\""):  # no Markdown or escaping at play
        assert para[1] == html.escape(visible(text))
    assert all(c.isprintable() or c in "\n " for c in page)
    assert md_text(text).count("|") == md_text(text).count("\\|")


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    option=st.sampled_from(["--n-boot", "--batch-rows", "--limit", "--seed", "--max-tool-lines"]),
    value=st.text(max_size=8) | st.integers(-(2**40), 2**40).map(str),
)
def test_redact_numeric_options_any_text_is_exit_2_one_line(
    option: str, value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the data file is missing, so a valid value fails on the data: either way, one line
    argv = ["redact", str(tmp_path / "none.jsonl"), "--out", str(tmp_path / "o"),
            "--model", "sklearn:none.joblib", f"{option}={value}"]  # fmt: skip
    rc = main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1
    assert ("none.jsonl" in err[0]) != (option in err[0] and "allowed" in err[0])
