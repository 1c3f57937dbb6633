"""The tau2 retail domain's tools, written from its database and policy.

Read tools return the current state serialized as tau2 does (``json.dumps`` of the
record); write tools change a private deep copy of the database. A tool that fails
returns ``"Error: <reason>"``, the string the environment itself puts in the tool
message (``error=true`` in tau2 results files), e.g. ``"Error: Order not found"``.
"""

from __future__ import annotations

import copy
import json
import unicodedata
from collections.abc import Callable, Mapping
from typing import Any

from toolaudit.faults._schemas import TOOL_SCHEMAS

READ_TOOLS = (
    "find_user_id_by_email",
    "find_user_id_by_name_zip",
    "get_user_details",
    "get_order_details",
    "get_product_details",
    "get_item_details",
    "list_all_product_types",
)
WRITE_TOOLS = (
    "cancel_pending_order",
    "modify_pending_order_items",
    "modify_pending_order_address",
    "modify_pending_order_payment",
    "return_delivered_order_items",
    "exchange_delivered_order_items",
    "modify_user_address",
)
GENERIC_TOOLS = ("calculate", "transfer_to_human_agents")
#: Tools that re-read mutable state (the seed's V).
REREAD_TOOLS = ("get_order_details", "get_user_details")
#: The seven legal order statuses (the falsified-status arm draws from these).
ORDER_STATUSES = (
    "pending",
    "processed",
    "delivered",
    "cancelled",
    "pending (item modified)",
    "exchange requested",
    "return requested",
)


class ToolFailure(Exception):
    """Raised inside a tool; the environment returns ``"Error: " + message``."""


def _fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def _dump(record: Any) -> str:
    return json.dumps(record)


# tau2's Order model: optional fields are always serialized (null when unset), in order.
_ORDER_OPTIONAL = (
    "cancel_reason",
    "exchange_items",
    "exchange_new_items",
    "exchange_payment_method_id",
    "exchange_price_difference",
    "return_items",
    "return_payment_method_id",
)


def dump_order(order: dict[str, Any]) -> str:
    """An order as the environment returns it (optional fields present, null if unset)."""
    base = {k: v for k, v in order.items() if k not in _ORDER_OPTIONAL}
    return json.dumps({**base, **{k: order.get(k) for k in _ORDER_OPTIONAL}})


class RetailEnvironment:
    """The retail tools over ``db`` (``{products, users, orders}``), copy-on-write.

    The caller's database is never changed: each table is copied shallowly (a dict of
    references) and a record is deep-copied only the first time a write tool changes it,
    so building an environment costs microseconds rather than a copy of the whole db.

    Example:
        >>> env = RetailEnvironment({"products": {}, "users": {}, "orders": {}})
        >>> env.call("get_order_details", {"order_id": "#W0"})
        ('Error: Order not found', True)
    """

    def __init__(self, db: Mapping[str, Any]) -> None:
        self.db: dict[str, Any] = {k: dict(v) if isinstance(v, dict) else v for k, v in db.items()}
        self._owned: set[tuple[str, str]] = set()
        self._tools: dict[str, Callable[..., str]] = {
            name: getattr(self, f"_t_{name}") for name in READ_TOOLS + WRITE_TOOLS + GENERIC_TOOLS
        }

    @property
    def tool_names(self) -> tuple[str, ...]:
        """Every tool this environment offers, in schema order."""
        return tuple(TOOL_SCHEMAS)

    def call(self, name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        """Run one tool; returns ``(content, error)`` as the environment would record it."""
        fn = self._tools.get(name)
        if fn is None:
            return f"Error: Tool '{name}' not found.", True
        try:
            return fn(**arguments), False
        except ToolFailure as exc:
            return f"Error: {exc}", True
        except TypeError as exc:  # wrong or missing arguments
            return f"Error: {exc}", True

    # -- lookups ---------------------------------------------------------------------
    def _record(self, table: str, key: str, *, write: bool) -> dict[str, Any]:
        """A record, deep-copied into this environment the first time it is written."""
        if write and (table, key) not in self._owned:
            self.db[table][key] = copy.deepcopy(self.db[table][key])
            self._owned.add((table, key))
        return self.db[table][key]

    def _order(self, order_id: str, *, write: bool = False) -> dict[str, Any]:
        if order_id not in self.db["orders"]:
            raise ToolFailure("Order not found")
        return self._record("orders", order_id, write=write)

    def _user(self, user_id: str, *, write: bool = False) -> dict[str, Any]:
        if user_id not in self.db["users"]:
            raise ToolFailure("User not found")
        return self._record("users", user_id, write=write)

    def _product(self, product_id: str) -> dict[str, Any]:
        if product_id not in self.db["products"]:
            raise ToolFailure("Product not found")
        return self.db["products"][product_id]

    def _variant(self, product_id: str, item_id: str) -> dict[str, Any]:
        product = self._product(product_id)
        if item_id not in product["variants"]:
            raise ToolFailure("Variant not found")
        return product["variants"][item_id]

    def _payment(self, user_id: str, payment_id: str, *, write: bool = False) -> dict[str, Any]:
        methods = self._user(user_id, write=write)["payment_methods"]
        if payment_id not in methods:
            raise ToolFailure("Payment method not found")
        return methods[payment_id]

    @staticmethod
    def _is_gift(method: dict[str, Any]) -> bool:
        return method.get("source") == "gift_card"

    def _check_items(self, order: dict[str, Any], item_ids: list[str], message: str) -> None:
        have = [it["item_id"] for it in order["items"]]
        for item_id in item_ids:
            if item_ids.count(item_id) > have.count(item_id):
                raise ToolFailure(message.format(item_id=item_id))

    def _price_difference(
        self, order: dict[str, Any], item_ids: list[str], new_item_ids: list[str], *, strict: bool
    ) -> float:
        diff = 0.0
        for item_id, new_id in zip(item_ids, new_item_ids, strict=True):
            if strict and item_id == new_id:
                raise ToolFailure("The new item id should be different from the old item id")
            item = next((it for it in order["items"] if it["item_id"] == item_id), None)
            if item is None:
                raise ToolFailure(f"Item {item_id} not found")
            variant = self._variant(item["product_id"], new_id)
            if not variant["available"]:
                raise ToolFailure(f"New item {new_id} not found or available")
            diff += variant["price"] - item["price"]
        return round(diff, 2)

    # -- read tools ------------------------------------------------------------------
    def _t_find_user_id_by_email(self, email: str) -> str:
        for user_id, user in self.db["users"].items():
            if _fold(user["email"]) == _fold(email):
                return str(user_id)
        raise ToolFailure("User not found")

    def _t_find_user_id_by_name_zip(self, first_name: str, last_name: str, zip: str) -> str:
        for user_id, user in self.db["users"].items():
            name = user["name"]
            if (
                _fold(name["first_name"]) == _fold(first_name)
                and _fold(name["last_name"]) == _fold(last_name)
                and user["address"]["zip"] == zip
            ):
                return str(user_id)
        raise ToolFailure("User not found")

    def _t_get_user_details(self, user_id: str) -> str:
        return _dump(self._user(user_id))

    def _t_get_order_details(self, order_id: str) -> str:
        return dump_order(self._order(order_id))

    def _t_get_product_details(self, product_id: str) -> str:
        return _dump(self._product(product_id))

    def _t_get_item_details(self, item_id: str) -> str:
        for product in self.db["products"].values():
            if item_id in product["variants"]:
                return _dump(product["variants"][item_id])
        raise ToolFailure("Item not found")

    def _t_list_all_product_types(self) -> str:
        names = {p["name"]: p["product_id"] for p in self.db["products"].values()}
        return json.dumps(names, sort_keys=True)

    def _t_calculate(self, expression: str) -> str:
        if not expression or not all(c in "0123456789+-*/(). " for c in expression):
            raise ToolFailure("Invalid characters in expression")
        try:
            value = eval(expression, {"__builtins__": None}, {})  # noqa: S307 - charset checked
        except (SyntaxError, ZeroDivisionError) as exc:
            raise ToolFailure(str(exc)) from None
        return str(round(float(value), 2))

    def _t_transfer_to_human_agents(self, summary: str) -> str:
        return "Transfer successful"

    # -- write tools -----------------------------------------------------------------
    def _t_cancel_pending_order(self, order_id: str, reason: str) -> str:
        order = self._order(order_id, write=True)
        if order["status"] != "pending":
            raise ToolFailure("Non-pending order cannot be cancelled")
        if reason not in ("no longer needed", "ordered by mistake"):
            raise ToolFailure("Invalid reason")
        refunds = []
        for payment in order["payment_history"]:
            pid = payment["payment_method_id"]
            refunds.append(
                {
                    "transaction_type": "refund",
                    "amount": payment["amount"],
                    "payment_method_id": pid,
                }
            )
            method = self._payment(order["user_id"], pid, write=True)
            if self._is_gift(method):
                method["balance"] = round(method["balance"] + payment["amount"], 2)
        order["status"] = "cancelled"
        order["cancel_reason"] = reason
        order["payment_history"].extend(refunds)
        return dump_order(order)

    def _t_exchange_delivered_order_items(
        self, order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str
    ) -> str:
        order = self._order(order_id, write=True)
        if order["status"] != "delivered":
            raise ToolFailure("Non-delivered order cannot be exchanged")
        self._check_items(order, item_ids, "Number of {item_id} not found.")
        if len(item_ids) != len(new_item_ids):
            raise ToolFailure("The number of items to be exchanged should match.")
        diff = self._price_difference(order, item_ids, new_item_ids, strict=False)
        method = self._payment(order["user_id"], payment_method_id)
        if self._is_gift(method) and method["balance"] < diff:
            raise ToolFailure("Insufficient gift card balance to pay for the price difference")
        order["status"] = "exchange requested"
        order["exchange_items"] = sorted(item_ids)
        order["exchange_new_items"] = sorted(new_item_ids)
        order["exchange_payment_method_id"] = payment_method_id
        order["exchange_price_difference"] = diff
        return dump_order(order)

    def _t_modify_pending_order_items(
        self, order_id: str, item_ids: list[str], new_item_ids: list[str], payment_method_id: str
    ) -> str:
        order = self._order(order_id, write=True)
        if order["status"] != "pending":
            raise ToolFailure("Non-pending order cannot be modified")
        self._check_items(order, item_ids, "{item_id} not found")
        if len(item_ids) != len(new_item_ids):
            raise ToolFailure("The number of items to be exchanged should match")
        diff = self._price_difference(order, item_ids, new_item_ids, strict=True)
        method = self._payment(order["user_id"], payment_method_id, write=True)
        if self._is_gift(method) and method["balance"] < diff:
            raise ToolFailure("Insufficient gift card balance to pay for the new item")
        order["payment_history"].append(
            {
                "transaction_type": "payment" if diff > 0 else "refund",
                "amount": abs(diff),
                "payment_method_id": payment_method_id,
            }
        )
        if self._is_gift(method):
            method["balance"] = round(method["balance"] - diff, 2)
        for item_id, new_id in zip(item_ids, new_item_ids, strict=True):
            item = next(it for it in order["items"] if it["item_id"] == item_id)
            variant = self._variant(item["product_id"], new_id)
            item["item_id"] = new_id
            item["price"] = variant["price"]
            item["options"] = copy.deepcopy(variant["options"])
        order["status"] = "pending (item modified)"
        return dump_order(order)

    def _t_modify_pending_order_address(self, order_id: str, **address: str) -> str:
        order = self._order(order_id, write=True)
        if "pending" not in order["status"]:
            raise ToolFailure("Non-pending order cannot be modified")
        order["address"] = _address(**address)
        return dump_order(order)

    def _t_modify_pending_order_payment(self, order_id: str, payment_method_id: str) -> str:
        order = self._order(order_id, write=True)
        if "pending" not in order["status"]:
            raise ToolFailure("Non-pending order cannot be modified")
        method = self._payment(order["user_id"], payment_method_id, write=True)
        history = order["payment_history"]
        if len(history) != 1 or history[0]["transaction_type"] != "payment":
            raise ToolFailure("There should be exactly one payment for a pending order")
        old_id = history[0]["payment_method_id"]
        if old_id == payment_method_id:
            raise ToolFailure("The new payment method should be different from the current one")
        amount = history[0]["amount"]
        if self._is_gift(method) and method["balance"] < amount:
            raise ToolFailure("Insufficient gift card balance to pay for the order")
        history.extend(
            [
                {
                    "transaction_type": "payment",
                    "amount": amount,
                    "payment_method_id": payment_method_id,
                },
                {"transaction_type": "refund", "amount": amount, "payment_method_id": old_id},
            ]
        )
        if self._is_gift(method):
            method["balance"] = round(method["balance"] - amount, 2)
        old = self._payment(order["user_id"], old_id, write=True)
        if self._is_gift(old):
            old["balance"] = round(old["balance"] + amount, 2)
        return dump_order(order)

    def _t_modify_user_address(self, user_id: str, **address: str) -> str:
        user = self._user(user_id, write=True)
        user["address"] = _address(**address)
        return _dump(user)

    def _t_return_delivered_order_items(
        self, order_id: str, item_ids: list[str], payment_method_id: str
    ) -> str:
        order = self._order(order_id, write=True)
        if order["status"] != "delivered":
            raise ToolFailure("Non-delivered order cannot be returned")
        method = self._payment(order["user_id"], payment_method_id)
        original = order["payment_history"][0]["payment_method_id"]
        if not self._is_gift(method) and payment_method_id != original:
            raise ToolFailure("Payment method should be the original payment method")
        self._check_items(order, item_ids, "Some item not found")
        order["status"] = "return requested"
        order["return_items"] = sorted(item_ids)
        order["return_payment_method_id"] = payment_method_id
        return dump_order(order)


def _address(
    *, address1: str, address2: str, city: str, state: str, country: str, zip: str
) -> dict[str, str]:
    return {
        "address1": address1,
        "address2": address2,
        "city": city,
        "country": country,
        "state": state,
        "zip": zip,
    }
