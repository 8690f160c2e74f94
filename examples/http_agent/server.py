"""A tiny agent behind HTTP, stdlib only: `python examples/http_agent/server.py [PORT]`.

Then: `polygon run SUITE --agent http://127.0.0.1:8765/agent`. Polygon POSTs
`{"conversation_id", "event", "context"?}` for every event; this answers `{"actions": [...]}`.
"""

from __future__ import annotations

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def respond(conversation_id: str, event: dict[str, Any]) -> list[dict[str, Any]]:
    """The agent's logic: events in, actions out (the shapes of docs/agents.md)."""
    kind = event["kind"]
    if kind == "call_started":
        return [{"kind": "say", "text": "Hello, order line. How can I help?"}]
    if kind == "caller_said":
        if "bye" in event["text"].lower():
            return [{"kind": "say", "text": "Goodbye!"}, {"kind": "end_call", "reason": "done"}]
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
        actions = respond(body["conversation_id"], body["event"])
        data = json.dumps({"actions": actions}).encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 8765
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    print(f"agent listening on http://127.0.0.1:{port}/agent", flush=True)
    server.serve_forever()
