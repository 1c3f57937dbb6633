"""The retail tools against the real tau2 database and recorded tool returns."""

from __future__ import annotations

import json

import pytest

from toolaudit.faults._replay import user_message
from toolaudit.faults._retail import TOOL_SCHEMAS, WRITE_TOOLS, RetailEnvironment
from toolaudit.traces import load_domain


@pytest.fixture(scope="module")
def domain(shared_data):
    return load_domain(shared_data / "tau2" / "domains" / "retail")


def _recorded_results(shared_data):
    """(name, arguments, content, error) of every tool call in the retail results files,
    up to the first write of each simulation (reads before a write see the initial db)."""
    out = []
    for path in sorted((shared_data / "tau2" / "simulations").glob("retail__*.json")):
        doc = json.loads(path.read_text())
        for sim in doc["simulations"]:
            calls = {}
            for m in sim["messages"]:
                for c in m.get("tool_calls") or []:
                    calls[c["id"]] = c
                if m["role"] == "tool":
                    c = calls[m["id"]]
                    out.append((c["name"], c["arguments"], m["content"], m["error"]))
                    if c["name"] in WRITE_TOOLS and not m["error"]:
                        break
    return out


def test_domain_loads_114_tasks_with_reference_actions(domain):
    assert len(domain.tasks) == 114
    assert domain.tasks[0].reference_actions[1].name == "get_order_details"
    assert user_message(domain.tasks[0]).startswith("I am Yusuf Rossi in zip code 19122.")


def test_read_tools_reproduce_recorded_returns_byte_for_byte(domain, shared_data):
    env = RetailEnvironment(domain.db)
    reads = [
        r
        for r in _recorded_results(shared_data)
        if r[0]
        in (
            "get_order_details",
            "get_user_details",
            "get_product_details",
            "find_user_id_by_email",
            "find_user_id_by_name_zip",
        )
    ]  # noqa: E501
    assert len(reads) > 100
    matched = sum(
        env.call(name, dict(args)) == (content, err) for name, args, content, err in reads
    )
    # Gift-card balances change after earlier writes in a few simulations; all else matches.
    assert matched / len(reads) > 0.95


def test_error_strings_match_the_environment(domain):
    env = RetailEnvironment(domain.db)
    assert env.call("get_order_details", {"order_id": "W2378156"}) == (
        "Error: Order not found",
        True,
    )
    assert env.call("find_user_id_by_email", {"email": "no@x.com"}) == (
        "Error: User not found",
        True,
    )
    delivered = next(o for o, r in domain.db["orders"].items() if r["status"] == "delivered")
    assert env.call(
        "cancel_pending_order", {"order_id": delivered, "reason": "no longer needed"}
    ) == (
        "Error: Non-pending order cannot be cancelled",
        True,
    )


def test_write_tools_change_a_copy_only(domain):
    pending = next(o for o, r in domain.db["orders"].items() if r["status"] == "pending")
    env = RetailEnvironment(domain.db)
    content, error = env.call(
        "cancel_pending_order", {"order_id": pending, "reason": "ordered by mistake"}
    )
    assert not error and json.loads(content)["status"] == "cancelled"
    assert (
        json.loads(env.call("get_order_details", {"order_id": pending})[0])["status"] == "cancelled"
    )
    assert domain.db["orders"][pending]["status"] == "pending"


def test_environment_copies_only_the_records_it_writes(domain):
    env = RetailEnvironment(domain.db)
    pending = next(o for o, r in domain.db["orders"].items() if r["status"] == "pending")
    other = next(o for o in domain.db["orders"] if o != pending)
    env.call("cancel_pending_order", {"order_id": pending, "reason": "ordered by mistake"})
    # the written order is the environment's own copy; an untouched one is shared
    assert env.db["orders"][pending] is not domain.db["orders"][pending]
    assert env.db["orders"][other] is domain.db["orders"][other]


def test_schemas_cover_sixteen_tools_seven_writes():
    assert len(TOOL_SCHEMAS) == 16
    assert set(WRITE_TOOLS) <= set(TOOL_SCHEMAS) and len(WRITE_TOOLS) == 7
