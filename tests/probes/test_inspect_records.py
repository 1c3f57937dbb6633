"""Mutations of a real harness's tool list as data: aliases, derangements, reformatting,
policy substitution and the mapping back (no Inspect needed)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolaudit.errors import ConfigError
from toolaudit.probes._mutations import (
    HARNESS_CONDITIONS,
    NOT_A_TOOL,
    canonical_episode,
    mutation_of,
    reformat_text,
    tool_mutation,
    unformat_text,
)
from toolaudit.traces import Episode, Message, ToolCall

RETAIL = [
    "calculate", "cancel_pending_order", "exchange_delivered_order_items",
    "find_user_id_by_name_zip", "find_user_id_by_email", "get_order_details",
    "get_product_details", "get_user_details", "list_all_product_types",
    "modify_pending_order_address", "modify_pending_order_items",
    "modify_pending_order_payment", "modify_user_address", "return_delivered_order_items",
    "transfer_to_human_agents",
]  # fmt: skip


def test_tool_rename_aliases_are_new_unique_and_never_a_suffix_match() -> None:
    m = tool_mutation("tool_rename", RETAIL)
    shown = m.shown_of()
    assert shown["get_order_details"] == "fetch_order_details"
    assert shown["transfer_to_human_agents"] == "handoff_to_human_agents"
    assert len(set(shown.values())) == len(RETAIL)
    assert not set(shown.values()) & set(RETAIL)
    # inspect_evals' reference-action check accepts NAME and *_NAME: no alias may hide there
    assert not any(sh.endswith(f"_{op}") for op, sh in shown.items())


def test_misleading_names_is_a_derangement_of_the_tool_names() -> None:
    m = tool_mutation("misleading_names", RETAIL)
    shown = m.shown_of()
    assert sorted(shown.values()) == sorted(RETAIL)
    assert all(op != sh for op, sh in shown.items())
    assert m.operation_of()[shown["cancel_pending_order"]] == "cancel_pending_order"


def test_substitute_replaces_whole_words_at_once() -> None:
    m = tool_mutation("misleading_names", ["a_tool", "b_tool", "c_tool"])
    text = "call a_tool, then b_tool; never a_tool_x or xa_tool."
    # each name becomes the next one's name, in one pass (no chain a->b->c)
    assert m.substitute(text) == "call b_tool, then c_tool; never a_tool_x or xa_tool."


def test_reformat_keeps_values_and_array_order() -> None:
    text = '{"order_id":"#W1","items":[{"id":"1","price":2.5},{"id":"2","price":1}],"ok":true}'
    shown = reformat_text(text)
    assert shown != text
    assert json.loads(shown)["result"]["items"][1]["id"] == "2"
    assert list(json.loads(shown)["result"]) == ["ok", "items", "order_id"]
    assert json.loads(unformat_text(shown)) == json.loads(text)
    assert list(json.loads(unformat_text(shown))) == ["order_id", "items", "ok"]
    assert reformat_text("sara_doe_496") == "sara_doe_496"  # a plain string is unchanged
    assert reformat_text("1234.5") == "1234.5"


@given(st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda ch: st.lists(ch, max_size=4) | st.dictionaries(st.text(max_size=4), ch, max_size=4),
    max_leaves=20,
))  # fmt: skip
def test_unformat_inverts_reformat_for_any_json_container(value: object) -> None:
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    shown = reformat_text(text)
    assert unformat_text(shown) == (text if isinstance(value, dict | list) else shown)


def test_unknown_condition_is_refused_naming_the_choices() -> None:
    with pytest.raises(ConfigError, match="rubric_change"):
        tool_mutation("rubric_change", RETAIL)
    assert "rubric_change" not in HARNESS_CONDITIONS


def test_canonical_episode_maps_names_back_and_marks_calls_to_no_tool() -> None:
    m = tool_mutation("tool_rename", RETAIL)
    ep = Episode(
        task_id="t",
        condition="tool_rename",
        messages=[
            Message(role="assistant", tool_calls=[
                ToolCall(id="1", name="fetch_order_details", arguments={"order_id": "#W1"}),
                ToolCall(id="2", name="get_order_details", arguments={"order_id": "#W1"}),
            ]),
            Message(role="tool", tool_call_id="1", name="fetch_order_details", content="{}"),
        ],
        source={"mutation": m.describe()},
    )  # fmt: skip
    canon = canonical_episode(ep, mutation_of(ep))
    names = [c.name for c in canon.tool_calls()]
    assert names == ["get_order_details", NOT_A_TOOL + "get_order_details"]
    assert canon.messages[1].name == "get_order_details"
