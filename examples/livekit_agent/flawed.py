"""The same order-line agent with LiveKit's default tool settings: a call that is running
goes on when the caller corrects themselves (`on_duplicate="allow"`), so the stale write
lands beside the corrected one. Polygon names it: `inflight_call_not_cancelled`.

Test it unchanged:  polygon run three-layer --agent livekit:flawed.py:Assistant
"""

import os

import httpx
from livekit.agents import Agent, function_tool
from livekit.plugins import openai

ORDERS_API = os.environ.get("ORDERS_API", "https://orders.example.com/api")

INSTRUCTIONS = """You answer the phone for an online shop. Change orders and book refunds
when the caller asks. When the caller corrects themselves, call the tool again with the
corrected values. After a change, read the order back and confirm what it now holds."""


class Assistant(Agent):
    def __init__(self) -> None:
        super().__init__(instructions=INSTRUCTIONS, llm=openai.LLM(model="gpt-4o-mini"))

    @function_tool
    async def lookup_order(self, order_id: str) -> dict:
        """Look up an order by its number."""
        return await _get(f"/orders/{order_id}")

    @function_tool
    async def update_order(
        self, order_id: str, quantity: int | None = None, delivery_date: str | None = None
    ) -> dict:
        """Change the quantity and/or delivery date of an order."""
        change = {"quantity": quantity, "delivery_date": delivery_date}
        return await _post(f"/orders/{order_id}", {k: v for k, v in change.items() if v})

    @function_tool
    async def issue_refund(self, order_id: str, amount: int) -> dict:
        """Refund an amount in euros on an order (each call books one refund)."""
        return await _post(f"/orders/{order_id}/refunds", {"amount": amount})

    @function_tool
    async def get_refund(self, refund_id: str) -> dict:
        """Read a booked refund."""
        return await _get(f"/refunds/{refund_id}")


async def _get(path: str) -> dict:
    async with httpx.AsyncClient(base_url=ORDERS_API) as http:
        return (await http.get(path)).raise_for_status().json()


async def _post(path: str, body: dict) -> dict:
    async with httpx.AsyncClient(base_url=ORDERS_API) as http:
        return (await http.post(path, json=body)).raise_for_status().json()
