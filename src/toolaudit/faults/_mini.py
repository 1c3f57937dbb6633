"""The shipped mini domain: a small order desk in the tau2 retail record format (same
tools, same record shapes), as a ``toolaudit.traces.Domain``. It is used only when asked
for (``--domain mini``) and is then recorded as a fallback in ``faults.json``.
"""

from __future__ import annotations

from typing import Any

from toolaudit.traces import Domain, DomainTask, ReferenceAction

MINI_POLICY = """# Order desk policy

You help customers with their own orders. First authenticate the customer by finding
their user id via email, or via name + zip code. Then you may look up their profile and
their orders. An order can be cancelled only if its status is 'pending'; returns and
exchanges only for 'delivered' orders; check the status before acting. Refunds go to
the original payment method or an existing gift card. Ask for an explicit 'yes' before
any action that changes the database. Make at most one tool call at a time."""


def _user(
    uid: str, first: str, last: str, zip_: str, pay: dict[str, Any], orders: list[str]
) -> dict[str, Any]:
    return {
        "user_id": uid,
        "name": {"first_name": first, "last_name": last},
        "address": {
            "address1": "12 Elm Street",
            "address2": "Suite 4",
            "city": "Austin",
            "country": "USA",
            "state": "TX",
            "zip": zip_,
        },
        "email": f"{first.lower()}.{last.lower()}@example.com",
        "payment_methods": pay,
        "orders": orders,
    }


def _order(
    oid: str, uid: str, status: str, item: tuple[str, str, str, float], pay_id: str
) -> dict[str, Any]:
    name, pid, iid, price = item
    fulfil = (
        [] if status == "pending" else [{"tracking_id": ["8" + oid[2:] * 2], "item_ids": [iid]}]
    )
    return {
        "order_id": oid,
        "user_id": uid,
        "address": {
            "address1": "12 Elm Street",
            "address2": "Suite 4",
            "city": "Austin",
            "country": "USA",
            "state": "TX",
            "zip": "78701",
        },
        "items": [
            {
                "name": name,
                "product_id": pid,
                "item_id": iid,
                "price": price,
                "options": {"color": "blue"},
            }
        ],
        "status": status,
        "fulfillments": fulfil,
        "payment_history": [
            {"transaction_type": "payment", "amount": price, "payment_method_id": pay_id}
        ],
    }


def mini_domain() -> Domain:
    """A tiny order-lookup domain in the retail record format, with four tasks whose
    reference actions reach ``get_order_details`` at position 2 or later."""
    lamp = ("Desk Lamp", "6817146515", "9083642334", 164.28)
    kettle = ("Electric Kettle", "1075968781", "7602931732", 153.25)
    products = {
        lamp[1]: {
            "name": lamp[0],
            "product_id": lamp[1],
            "variants": {
                lamp[2]: {
                    "item_id": lamp[2],
                    "options": {"color": "blue"},
                    "available": True,
                    "price": lamp[3],
                },
                "7624783998": {
                    "item_id": "7624783998",
                    "options": {"color": "red"},
                    "available": True,
                    "price": 154.17,
                },
            },
        },
        kettle[1]: {
            "name": kettle[0],
            "product_id": kettle[1],
            "variants": {
                kettle[2]: {
                    "item_id": kettle[2],
                    "options": {"color": "blue"},
                    "available": True,
                    "price": kettle[3],
                },
            },
        },
    }
    cc = {
        "credit_card_1111111": {
            "source": "credit_card",
            "id": "credit_card_1111111",
            "brand": "visa",
            "last_four": "1111",
        }
    }
    pp = {"paypal_2222222": {"source": "paypal", "id": "paypal_2222222"}}
    users = {
        "ana_ruiz_1001": _user("ana_ruiz_1001", "Ana", "Ruiz", "78701", cc, ["#W1000001"]),
        "ben_cole_1002": _user(
            "ben_cole_1002", "Ben", "Cole", "78702", pp, ["#W1000002", "#W1000003"]
        ),
    }
    orders = {
        "#W1000001": _order("#W1000001", "ana_ruiz_1001", "pending", lamp, "credit_card_1111111"),
        "#W1000002": _order("#W1000002", "ben_cole_1002", "delivered", kettle, "paypal_2222222"),
        "#W1000003": _order("#W1000003", "ben_cole_1002", "processed", lamp, "paypal_2222222"),
    }
    A = ReferenceAction
    tasks = (
        (
            "mini_cancel",
            "I am Ana Ruiz, email ana.ruiz@example.com. Please cancel my lamp order #W1000001, "
            "I no longer need it.",
            (
                A("find_user_id_by_email", {"email": "ana.ruiz@example.com"}),
                A("get_user_details", {"user_id": "ana_ruiz_1001"}),
                A("get_order_details", {"order_id": "#W1000001"}),
                A("cancel_pending_order", {"order_id": "#W1000001", "reason": "no longer needed"}),
            ),
        ),
        (
            "mini_return",
            "I am Ben Cole in zip code 78702. I want to return the kettle from order #W1000002 "
            "and get the refund on my paypal.",
            (
                A(
                    "find_user_id_by_name_zip",
                    {"first_name": "Ben", "last_name": "Cole", "zip": "78702"},
                ),
                A("get_user_details", {"user_id": "ben_cole_1002"}),
                A("get_order_details", {"order_id": "#W1000002"}),
                A(
                    "return_delivered_order_items",
                    {
                        "order_id": "#W1000002",
                        "item_ids": [kettle[2]],
                        "payment_method_id": "paypal_2222222",
                    },
                ),
            ),
        ),
        (
            "mini_status",
            "I am Ben Cole, email ben.cole@example.com. Where is my lamp order #W1000003?",
            (
                A("find_user_id_by_email", {"email": "ben.cole@example.com"}),
                A("get_user_details", {"user_id": "ben_cole_1002"}),
                A("get_order_details", {"order_id": "#W1000003"}),
                A("get_product_details", {"product_id": lamp[1]}),
            ),
        ),
        (
            "mini_address",
            "I am Ana Ruiz in zip code 78701. Please ship order #W1000001 to 3 Oak Road, Austin TX 78703.",
            (
                A(
                    "find_user_id_by_name_zip",
                    {"first_name": "Ana", "last_name": "Ruiz", "zip": "78701"},
                ),
                A("get_order_details", {"order_id": "#W1000001"}),
                A("get_order_details", {"order_id": "#W1000001"}),
                A(
                    "modify_pending_order_address",
                    {
                        "order_id": "#W1000001",
                        "address1": "3 Oak Road",
                        "address2": "",
                        "city": "Austin",
                        "state": "TX",
                        "country": "USA",
                        "zip": "78703",
                    },
                ),
            ),
        ),
    )
    return Domain(
        name="mini",
        policy=MINI_POLICY,
        tasks=tuple(_task(*t) for t in tasks),
        db={"products": products, "users": users, "orders": orders},
    )


def _task(task_id: str, message: str, actions: tuple[ReferenceAction, ...]) -> DomainTask:
    # The customer's words are stored as tau2 stores them (reason_for_call), in the
    # first person already, so the same user-message reader serves both domains.
    scenario = {"instructions": {"reason_for_call": message}}
    return DomainTask(
        id=task_id,
        instructions=message,
        reference_actions=actions,
        raw={"id": task_id, "user_scenario": scenario},
    )
