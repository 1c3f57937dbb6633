"""JSON schemas of the retail tools, written for the prompt (one short line per field)."""

from __future__ import annotations

import json
from typing import Any

_ORDER = {"type": "string", "description": "Order id such as '#W0000000' (with the '#')."}
_USER = {"type": "string", "description": "User id such as 'sara_doe_496'."}
_PAYMENT = {
    "type": "string",
    "description": "Payment method id such as 'gift_card_0000000' or 'credit_card_0000000'.",
}
_ITEMS = {"type": "array", "items": {"type": "string"}, "description": "Item ids."}
_ADDRESS = {
    "address1": {"type": "string"},
    "address2": {"type": "string"},
    "city": {"type": "string"},
    "state": {"type": "string"},
    "country": {"type": "string"},
    "zip": {"type": "string"},
}


def _tool(description: str, **params: dict[str, Any]) -> dict[str, Any]:
    return {
        "description": description,
        "parameters": {"type": "object", "properties": params, "required": list(params)},
    }


#: name -> {description, parameters}; the order is the order shown in the prompt.
TOOL_SCHEMAS: dict[str, dict[str, Any]] = {
    "find_user_id_by_email": _tool(
        "Find user id by email.", email={"type": "string", "description": "The user's email."}
    ),
    "find_user_id_by_name_zip": _tool(
        "Find user id by first name, last name and zip code.",
        first_name={"type": "string"},
        last_name={"type": "string"},
        zip={"type": "string"},
    ),
    "get_user_details": _tool(
        "Get the details of a user (profile, address, payment methods, orders).", user_id=_USER
    ),
    "get_order_details": _tool(
        "Get the status and details of an order (address, items, status, fulfillments, "
        "payment history).",
        order_id=_ORDER,
    ),
    "get_product_details": _tool(
        "Get the inventory details (variants, options, availability, price) of a product.",
        product_id={"type": "string", "description": "Product id (not an item id)."},
    ),
    "get_item_details": _tool(
        "Get the inventory details of an item.",
        item_id={"type": "string", "description": "Item id (not a product id)."},
    ),
    "list_all_product_types": _tool("List the name and product id of all product types."),
    "calculate": _tool(
        "Calculate a mathematical expression.",
        expression={"type": "string", "description": "Such as '2 + 2'."},
    ),
    "cancel_pending_order": _tool(
        "Cancel a pending order after explicit user confirmation.",
        order_id=_ORDER,
        reason={"type": "string", "enum": ["no longer needed", "ordered by mistake"]},
    ),
    "modify_pending_order_items": _tool(
        "Modify items of a pending order to other items of the same products (once).",
        order_id=_ORDER,
        item_ids=_ITEMS,
        new_item_ids=_ITEMS,
        payment_method_id=_PAYMENT,
    ),
    "modify_pending_order_address": _tool(
        "Modify the shipping address of a pending order.", order_id=_ORDER, **_ADDRESS
    ),
    "modify_pending_order_payment": _tool(
        "Modify the payment method of a pending order.",
        order_id=_ORDER,
        payment_method_id=_PAYMENT,
    ),
    "return_delivered_order_items": _tool(
        "Return items of a delivered order; refund to the original method or a gift card.",
        order_id=_ORDER,
        item_ids=_ITEMS,
        payment_method_id=_PAYMENT,
    ),
    "exchange_delivered_order_items": _tool(
        "Exchange items of a delivered order for other items of the same products.",
        order_id=_ORDER,
        item_ids=_ITEMS,
        new_item_ids=_ITEMS,
        payment_method_id=_PAYMENT,
    ),
    "modify_user_address": _tool(
        "Modify the default address of a user.", user_id=_USER, **_ADDRESS
    ),
    "transfer_to_human_agents": _tool(
        "Transfer the user to a human agent, with a summary of the issue.",
        summary={"type": "string"},
    ),
}


def schema_line(name: str, schemas: dict[str, dict[str, Any]] | None = None) -> str:
    """One tool's schema as a single JSON line ``{"name", "description", "parameters"}``."""
    spec = (schemas or TOOL_SCHEMAS)[name]
    return json.dumps({"name": name, **spec})
