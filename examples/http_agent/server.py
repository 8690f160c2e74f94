"""A tiny agent behind HTTP, stdlib only: `python examples/http_agent/server.py [PORT]`.

Then: `polygon run SUITE --agent http://127.0.0.1:8765/agent`. Polygon POSTs
`{"conversation_id", "event", "context"?}` for every event; this answers `{"actions": [...]}`.

It calls its tool itself, through Polygon's tool server: the `call_started` context names
`tool_server` (`http://127.0.0.1:PORT/conversations/ID`), and `POST {tool_server}/tools/NAME`
with the arguments answers `{"result": ...}` or `{"error": ..., "message": ...}`.
"""

from __future__ import annotations

import json
import re
import sys
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

TOOL_SERVERS: dict[str, str] = {}  # conversation id -> its tool server URL


def call_tool(conversation_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    """One tool call through Polygon's tool server: `{"result": ...}` or `{"error": ...}`."""
    request = urllib.request.Request(
        f"{TOOL_SERVERS[conversation_id]}/tools/{name}",
        data=json.dumps(args).encode("utf-8"),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        answer: dict[str, Any] = json.loads(response.read())
        return answer


def respond(
    conversation_id: str, event: dict[str, Any], context: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """The agent's logic: events in, actions out (the shapes of docs/agents.md)."""
    kind = event["kind"]
    if kind == "call_started":
        if context and context.get("tool_server"):
            TOOL_SERVERS[conversation_id] = context["tool_server"]
        return [{"kind": "say", "text": "Hello, order line. How can I help?"}]
    if kind == "caller_said":
        text = event["text"].lower()
        if any(word in text for word in ("bye", "that's all", "no thanks")):
            TOOL_SERVERS.pop(conversation_id, None)
            return [{"kind": "say", "text": "Goodbye!"}, {"kind": "end_call", "reason": "done"}]
        order = re.search(r"\b(\d{4,})\b", text)
        quantity = re.search(r"\bto (\d{1,3})\b", text)
        if order and quantity and conversation_id in TOOL_SERVERS:
            args = {"order_id": order.group(1), "quantity": int(quantity.group(1))}
            answer = call_tool(conversation_id, "update_order", args)
            if "result" in answer:
                done = f"Done: order {args['order_id']} now has quantity {args['quantity']}."
                return [{"kind": "say", "text": done + " Anything else?"}]
            return [{"kind": "say", "text": "Sorry, the order system failed. Please try later."}]
        return [
            {"kind": "say", "text": "Let me put you through to a colleague."},
            {"kind": "transfer", "target": "human"},
        ]
    if kind == "silence":
        return [{"kind": "say", "text": "Are you still there?"}]
    return []


class Handler(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        actions = respond(body["conversation_id"], body["event"], body.get("context"))
        data = json.dumps({"actions": actions}).encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8765
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    print(f"agent listening on http://127.0.0.1:{port}/agent", flush=True)
    server.serve_forever()
