"""`polygon serve` as a user starts it: the address printed, the token, clear start errors."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from typer.testing import CliRunner

from polygon_voice.cli import app as cli
from tests.processes import stop
from tests.web.conftest import Stored

START_SECONDS = 30


@contextmanager
def serving(*args: str) -> Iterator[tuple[subprocess.Popen[str], list[str]]]:
    """`polygon serve ARGS` in a subprocess, with the lines it printed up to the address."""
    command = [sys.executable, "-m", "polygon_voice", "serve", *args]
    env = {**os.environ, "COLUMNS": "200"}
    env.pop("POLYGON_WEB_TOKEN", None)
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    lines: list[str] = []
    try:
        deadline = time.monotonic() + START_SECONDS
        assert process.stdout is not None
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                break
            lines.append(line.strip())
            if line.startswith("Ctrl-C"):
                break
        yield process, lines
    finally:
        stop(process, signal.SIGINT)


def fetch(url: str, headers: dict[str, str] | None = None) -> tuple[int, str]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def address(lines: list[str], prefix: str) -> str:
    found = [line[len(prefix) :].strip() for line in lines if line.startswith(prefix)]
    assert found, lines
    return found[0]


def test_serve_prints_its_address_and_serves_the_runs(stored: Stored) -> None:
    with serving("--db", stored.db_url, "--port", "0") as (process, lines):
        url = address(lines, "Polygon web app:")
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/", url), url
        assert not any("token" in line for line in lines)
        status, body = fetch(url)
        assert status == 200
        assert stored.flawed in body
        # `curl -I`: the server itself sends the GET's headers and no body.
        with urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=10) as r:
            assert r.status == 200
            assert int(r.headers["content-length"]) == len(body.encode())
            assert r.read() == b""
        assert process.poll() is None


def test_serve_on_every_interface_prints_a_token_and_asks_for_it(stored: Stored) -> None:
    with serving("--db", stored.db_url, "--port", "0", "--host", "0.0.0.0") as (_, lines):
        url = address(lines, "Polygon web app:")
        with_token = address(lines, "Open:")
        token = with_token.split("?token=", 1)[1]
        assert len(token) >= 24
        assert sum(token in line for line in lines) == 1  # printed once
        assert fetch(url)[0] == 401
        status, body = fetch(url, {"Authorization": f"Bearer {token}"})
        assert status == 200
        assert stored.flawed in body


def test_a_given_token_is_quoted_in_the_address_printed(stored: Stored) -> None:
    token = "two words&more#"
    with serving("--db", stored.db_url, "--port", "0", "--token", token) as (_, lines):
        url = address(lines, "Polygon web app:")
        assert address(lines, "Open:") == f"{url}?token=two%20words%26more%23"
        assert fetch(url, {"Authorization": f"Bearer {token}"})[0] == 200


def test_a_port_in_use_is_a_clear_error(stored: Stored) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = CliRunner().invoke(cli, ["serve", "--db", stored.db_url, "--port", str(port)])
    assert result.exit_code == 2
    assert f"port {port} on 127.0.0.1 is in use" in result.stderr
    assert "--port" in result.stderr


def test_without_the_web_extra_serve_says_what_to_install(
    stored: Stored, monkeypatch: pytest.MonkeyPatch
) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        "polygon_voice.cli.serve.importlib.util.find_spec",
        lambda name, *a: None if name == "fastapi" else real(name, *a),
    )
    result = CliRunner().invoke(cli, ["serve", "--db", stored.db_url])
    assert result.exit_code == 2
    assert "install polygon-voice[web]" in result.stderr


def test_a_prompt_file_that_is_not_there_stops_the_start(stored: Stored, tmp_path: Path) -> None:
    missing = tmp_path / "nothing.md"
    result = CliRunner().invoke(
        cli, ["serve", "--db", stored.db_url, "--prompt", str(missing), "--port", "0"]
    )
    assert result.exit_code == 2
    assert "nothing.md" in result.stderr


def test_the_command_help_names_the_docs() -> None:
    result = CliRunner().invoke(cli, ["serve", "--help"])
    assert result.exit_code == 0
    assert "Serve the local web app over the stored runs (docs/web.md)." in result.stdout
    for option in ("--host", "--port", "--prompt", "--token", "--lint-tier", "--db"):
        assert option in result.stdout
