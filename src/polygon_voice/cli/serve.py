"""`polygon serve`: the local web app over the stored runs (docs/web.md).

Exit codes: 0 stopped with Ctrl-C; 2 the `web` extra is missing, the database or a
prompt file cannot be opened, or the port is taken.
"""

from __future__ import annotations

import importlib.util
import os
import secrets
import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated
from urllib.parse import quote

import typer
from rich.markup import escape

from polygon_voice.cli.app import app
from polygon_voice.cli.common import DbOption, console, fail

if TYPE_CHECKING:
    from polygon_voice.web.settings import WebSettings

TOKEN_ENV = "POLYGON_WEB_TOKEN"
WEB_MODULES = ("fastapi", "uvicorn", "multipart")
WEB_HINT = "install polygon-voice[web]: pip install 'polygon-voice[web]'"


@app.command()
def serve(
    db: DbOption = None,
    host: Annotated[
        str,
        typer.Option(
            "--host",
            help="Address to listen on. Anything but loopback needs the access token.",
        ),
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port.")] = 8000,
    prompt: Annotated[
        list[Path] | None,
        typer.Option(
            "--prompt",
            help="A prompt file the editor may open and save (repeatable); the prompts of "
            "stored personas are editable too.",
        ),
    ] = None,
    token: Annotated[
        str | None,
        typer.Option(
            "--token",
            envvar=TOKEN_ENV,
            show_envvar=True,
            help="Access token (default: generated when --host is not loopback).",
        ),
    ] = None,
    lint_tier: Annotated[
        int,
        typer.Option(
            "--lint-tier",
            min=1,
            max=4,
            help="The prompt editor's highest lint tier (1 rules, 2 word rarity: no model).",
        ),
    ] = 2,
) -> None:
    """Serve the local web app over the stored runs (docs/web.md).

    Loopback only by default. With another --host every request needs the access token:
    the address printed at start carries it once, then a cookie does.
    """
    missing = [name for name in WEB_MODULES if importlib.util.find_spec(name) is None]
    if missing:
        fail(f"the web app needs {', '.join(missing)}: {WEB_HINT}")
    settings = _settings(db, host, port, prompt or [], token, lint_tier)
    listener = _listen(host, port)
    bound_port = listener.getsockname()[1]
    if bound_port != port:  # --port 0: the system chose one
        from dataclasses import replace

        settings = replace(settings, port=bound_port)
    _run(settings, listener)


def _settings(
    db: str | None,
    host: str,
    port: int,
    prompts: list[Path],
    token: str | None,
    lint_tier: int,
) -> WebSettings:
    from polygon_voice.store import Store, StoreError, resolve_db_url
    from polygon_voice.web.settings import WebSettings, is_loopback

    try:
        url = resolve_db_url(db)
        Store(url).close()  # opened once now: a wrong URL is said before the server starts
    except StoreError as exc:
        fail(str(exc))
    for path in prompts:
        if not path.is_file() or not os.access(path, os.R_OK):
            fail(f"--prompt {path}: not a file this user can read")
    if token is not None and not token.strip():
        fail(f"--token (or {TOKEN_ENV}) is empty; give a token or leave it out")
    if token is None and not is_loopback(host):
        token = secrets.token_urlsafe(24)
    return WebSettings(
        db_url=url,
        host=host,
        port=port,
        token=token,
        prompt_files=tuple(path.resolve() for path in prompts),
        lint_max_tier=lint_tier,
    )


def _listen(host: str, port: int) -> socket.socket:
    """A listening socket on host:port, or a plain error when it cannot be had."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host.strip("[]"), port, type=socket.SOCK_STREAM
        )[0]
    except socket.gaierror as exc:
        fail(f"--host {host}: not an address of this machine ({exc.strerror})")
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        reason = "is in use" if exc.errno in (98, 48, 10048) else f"cannot be used ({exc.strerror})"
        fail(f"port {port} on {host} {reason}; choose another with --port")
    return sock


def _run(settings: WebSettings, listener: socket.socket) -> None:
    import uvicorn

    from polygon_voice.web.app import create_app
    from polygon_voice.web.settings import WILDCARD_HOSTS

    application = create_app(settings)
    address = settings.url()
    # soft_wrap: an address is never broken across lines, so it stays one click.
    console.print(f"Polygon web app: {escape(address)}", soft_wrap=True)
    if settings.token is not None:
        # Printed once: the browser keeps it in a cookie after the first visit.
        # Quoted: a --token with `&`, `#` or a space would otherwise break the address.
        opened = f"{address}?token={quote(settings.token, safe='')}"
        console.print(f"Open: {escape(opened)}", soft_wrap=True)
        if settings.host in WILDCARD_HOSTS:
            other = f"http://{socket.gethostname()}:{settings.port}/"
            console.print(
                f"From other machines: {escape(other)} (add the same ?token=)", soft_wrap=True
            )
        console.print("Every request needs this token; keep it to yourself.")
    console.print("Ctrl-C stops the server.")
    sys.stdout.flush()  # the address is seen at once, also through a pipe
    config = uvicorn.Config(
        application,
        log_level="warning",
        access_log=False,  # the first request's URL carries the token
        server_header=False,
        proxy_headers=False,
    )
    try:
        uvicorn.Server(config).run(sockets=[listener])
    except KeyboardInterrupt:
        pass
    finally:
        listener.close()
