"""The order CRM the bot talks to: the function schemas the LLM sees and their handlers.

The handlers call the shop's CRM over HTTP (CRM_URL). Under Polygon they never run: each
function named like one of the suite's tools is answered by Polygon's stub of that tool.
"""

import os

import aiohttp
from pipecat.adapters.llm.schemas.function_schema import FunctionSchema
from pipecat.adapters.llm.schemas.tools_schema import ToolsSchema
from pipecat.services.llm_service import FunctionCallParams

CRM_URL = os.getenv("CRM_URL", "http://localhost:8080")

ORDER_ID = {"type": "string", "pattern": "^[0-9]{4}$"}

lookup_order_schema = FunctionSchema(
    name="lookup_order",
    description="Look up an order by its number.",
    properties={"order_id": ORDER_ID},
    required=["order_id"],
)
update_order_schema = FunctionSchema(
    name="update_order",
    description="Change the quantity and/or delivery date of an order.",
    properties={
        "order_id": ORDER_ID,
        "quantity": {"type": "integer", "minimum": 1, "maximum": 99},
        "delivery_date": {"type": "string", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"},
    },
    required=["order_id"],
)
issue_refund_schema = FunctionSchema(
    name="issue_refund",
    description="Refund an amount in euros on an order (each call books one refund).",
    properties={"order_id": ORDER_ID, "amount": {"type": "integer", "minimum": 1}},
    required=["order_id", "amount"],
)
tools = ToolsSchema(standard_tools=[lookup_order_schema, update_order_schema, issue_refund_schema])


async def _crm(method: str, path: str, body: dict | None = None) -> dict:
    async with (
        aiohttp.ClientSession() as session,
        session.request(method, f"{CRM_URL}{path}", json=body) as response,
    ):
        return await response.json()


async def lookup_order(params: FunctionCallParams):
    order = await _crm("GET", f"/orders/{params.arguments['order_id']}")
    await params.result_callback(order)


async def update_order(params: FunctionCallParams):
    args = dict(params.arguments)
    order = await _crm("PATCH", f"/orders/{args.pop('order_id')}", args)
    await params.result_callback(order)


async def issue_refund(params: FunctionCallParams):
    refund = await _crm("POST", "/refunds", dict(params.arguments))
    await params.result_callback(refund)
