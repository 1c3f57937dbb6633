"""Tool-call parsing from the formats models really emit; failures are kept, not dropped."""

from __future__ import annotations

from types import SimpleNamespace

from toolaudit.models import parse_tool_calls
from toolaudit.models._toolcalls import calls_from_openai, openai_tool_calls


def test_parse_tool_calls_reads_qwen_tagged_blocks():
    text = (
        "Let me check.\n<tool_call>\n"
        '{"name": "get_order_details", "arguments": {"order_id": "#W1"}}\n</tool_call>\n'
        '<tool_call>{"name": "get_user", "arguments": {}}</tool_call>'
    )
    p = parse_tool_calls(text)
    assert [(c.id, c.name, c.arguments) for c in p.tool_calls] == [
        ("call_0", "get_order_details", {"order_id": "#W1"}),
        ("call_1", "get_user", {}),
    ]
    assert p.text == "Let me check." and p.parse_errors == ()


def test_parse_tool_calls_tries_an_unterminated_last_block():
    p = parse_tool_calls('<tool_call>\n{"name": "f", "arguments": {"x": 1}}\n')
    assert [c.name for c in p.tool_calls] == ["f"] and p.parse_errors == ()


def test_parse_tool_calls_records_broken_tagged_json():
    p = parse_tool_calls('<tool_call>{"name": "f", "arguments": {"x": 1</tool_call> done')
    assert p.tool_calls == ()
    assert len(p.parse_errors) == 1 and p.parse_errors[0].startswith(
        "<tool_call> block 1: invalid JSON"
    )
    assert p.text == "done"


def test_parse_tool_calls_reads_fenced_and_bare_json():
    fenced = parse_tool_calls(
        'Sure:\n```json\n{"name": "cancel", "arguments": {"reason": "no longer needed"}}\n```'
    )
    assert [(c.name, c.arguments) for c in fenced.tool_calls] == [
        ("cancel", {"reason": "no longer needed"})
    ]
    assert fenced.text == "Sure:"
    bare = parse_tool_calls(
        '{"name": "f", "arguments": "{\\"a\\": 2}"}\n{"name": "g", "parameters": {"b": 3}}'
    )
    assert [(c.name, c.arguments) for c in bare.tool_calls] == [("f", {"a": 2}), ("g", {"b": 3})]


def test_parse_tool_calls_leaves_plain_text_and_code_alone():
    for text in ("I can help with that.", "```python\nprint({'a': 1})\n```", 'Use {"x": 1} here'):
        p = parse_tool_calls(text)
        assert p.tool_calls == () and p.parse_errors == () and p.text == text.strip()


def test_parse_tool_calls_reports_call_shaped_objects_without_a_valid_call():
    no_name = parse_tool_calls('<tool_call>{"arguments": {}}</tool_call>')
    assert no_name.tool_calls == () and "no string 'name'" in no_name.parse_errors[0]
    bad_args = parse_tool_calls('{"name": "f", "arguments": "not json"}')
    assert bad_args.tool_calls == () and "arguments of 'f' are not JSON" in bad_args.parse_errors[0]
    cut = parse_tool_calls('```json\n{"name": "f", "arguments": {"x": ')
    assert cut.tool_calls == () and cut.parse_errors[0].startswith("fenced block 1: invalid JSON")


def test_calls_from_openai_keeps_ids_and_reports_bad_arguments():
    good = SimpleNamespace(
        model_dump=lambda: {"id": "abc", "function": {"name": "f", "arguments": '{"k": 1}'}}
    )
    bad = {"id": "d", "function": {"name": "g", "arguments": "{oops"}}
    calls, errors = calls_from_openai([good, bad])
    assert [(c.id, c.name, c.arguments) for c in calls] == [("abc", "f", {"k": 1})]
    assert errors == (
        "tool_calls[1]: arguments of 'g' are not JSON (Expecting property name enclosed in double quotes)",
    )
    assert openai_tool_calls(calls) == [
        {"id": "abc", "type": "function", "function": {"name": "f", "arguments": {"k": 1}}}
    ]
