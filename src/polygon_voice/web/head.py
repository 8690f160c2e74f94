"""HEAD answered as GET without the body: `curl -I`, link checkers and uptime probes get the
status and headers a browser's GET would get (Content-Length included).

FastAPI routes a GET page for GET only and answers HEAD with 405. This middleware sits
outside the app's own (the Host, token and origin checks), so a HEAD request passes the
same checks as the GET it stands for; the server keeps the real method in its own copy
of the scope, which is never changed here.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class HeadAsGet:
    """An ASGI middleware: a HEAD request runs as GET and its body is dropped."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "HEAD":
            await self.app(scope, receive, send)
            return

        async def headers_only(message: Message) -> None:
            if message["type"] in ("http.response.body", "http.response.pathsend"):
                if message.get("more_body", False):
                    return  # a later message ends the response
                message = {"type": "http.response.body", "body": b"", "more_body": False}
            await send(message)

        await self.app({**scope, "method": "GET"}, receive, headers_only)
