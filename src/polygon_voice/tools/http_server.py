"""The tool server: the stub tools over loopback HTTP, for agents that call their tools
themselves (docs/agents.md, "Tool server").

`POST /conversations/<conversation_id>/tools/<name>` with the arguments as a JSON object runs
the call in that conversation's stub runtime, on the engine's event loop (the server's
threads only wait), at the conversation's virtual time: it counts like any other call.
The answer is `{"result": ...}` or `{"error": kind, "message": ...}`, both HTTP 200; an
unknown conversation or tool is 404, a body that is not a JSON object 400.
"""

from __future__ import annotations

import asyncio
import json
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol

from polygon_voice.model.events import ToolError, ToolResult
from polygon_voice.tools.errors import ToolUsageError

CALL_TIMEOUT = 30.0  # wall seconds a request waits for the event loop
MAX_BODY_BYTES = 1_000_000  # a tool call's arguments; more is refused with HTTP 413
READ_TIMEOUT = 10.0  # wall seconds per read from an agent: a stuck one frees its thread


class DirectCaller(Protocol):
    """What the server needs of a running conversation (a `ConversationEngine`)."""

    def direct_tool_call(self, tool: str, args: dict[str, Any]) -> ToolResult | ToolError: ...


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128
    tool_server: ToolServer


class ToolServer:
    """Serves the tools of the conversations registered with it, on 127.0.0.1 (a free port)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._engines: dict[str, DirectCaller] = {}
        self._lock = threading.Lock()
        self._http = _Server(("127.0.0.1", 0), _Handler)
        self._http.tool_server = self
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)

    @classmethod
    def start(cls, loop: asyncio.AbstractEventLoop | None = None) -> ToolServer:
        """A running server whose calls run on `loop` (default: the running loop)."""
        server = cls(loop or asyncio.get_running_loop())
        server._thread.start()
        return server

    @property
    def base_url(self) -> str:
        """`http://127.0.0.1:<port>`."""
        return f"http://127.0.0.1:{self._http.server_port}"

    def url_for(self, conversation_id: str) -> str:
        """The base URL of one conversation's tools."""
        return f"{self.base_url}/conversations/{urllib.parse.quote(conversation_id, safe='')}"

    def register(self, conversation_id: str, engine: DirectCaller) -> None:
        """Serve the tools of a running conversation."""
        with self._lock:
            self._engines[conversation_id] = engine

    def unregister(self, conversation_id: str) -> None:
        """Stop serving a conversation (it ended)."""
        with self._lock:
            self._engines.pop(conversation_id, None)

    def close(self) -> None:
        """Stop serving and free the port."""
        self._http.shutdown()
        self._http.server_close()

    def engine(self, conversation_id: str) -> DirectCaller | None:
        """The registered conversation with that id, if any."""
        with self._lock:
            return self._engines.get(conversation_id)

    def call(self, engine: DirectCaller, tool: str, args: dict[str, Any]) -> ToolResult | ToolError:
        """Run the call on the event loop and wait for its answer (from a server thread)."""

        async def run() -> ToolResult | ToolError:
            return engine.direct_tool_call(tool, args)

        future = asyncio.run_coroutine_threadsafe(run(), self._loop)
        return future.result(timeout=CALL_TIMEOUT)


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    timeout = READ_TIMEOUT

    def do_POST(self) -> None:
        parts = urllib.parse.urlsplit(self.path).path.strip("/").split("/")
        if len(parts) != 4 or parts[0] != "conversations" or parts[2] != "tools":
            self._send(404, {"message": "POST /conversations/<id>/tools/<name>"})
            return
        conversation_id = urllib.parse.unquote(parts[1])
        tool = urllib.parse.unquote(parts[3])
        tools = self.server.tool_server
        length = self.headers.get("Content-Length") or "0"
        if not length.isdigit() or int(length) > MAX_BODY_BYTES:
            self._send(413, {"message": f"the arguments must be at most {MAX_BODY_BYTES:,} bytes"})
            return
        raw = self.rfile.read(int(length)) if int(length) else b"{}"
        try:
            args = json.loads(raw)
        except ValueError as exc:
            self._send(400, {"message": f"the body is no JSON: {exc}"})
            return
        if not isinstance(args, dict):
            self._send(400, {"message": "the body must be a JSON object of arguments"})
            return
        engine = tools.engine(conversation_id)
        if engine is None:
            self._send(404, {"message": f"no running conversation {conversation_id!r}"})
            return
        try:
            answer = tools.call(engine, tool, args)
        except ToolUsageError as exc:
            self._send(404, {"message": str(exc)})
            return
        except Exception as exc:  # the harness failed; the agent hears a server error
            self._send(500, {"message": f"{type(exc).__name__}: {exc}"})
            return
        if isinstance(answer, ToolResult):
            self._send(200, {"result": answer.result})
        else:
            self._send(200, {"error": answer.error.value, "message": answer.message})

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass
