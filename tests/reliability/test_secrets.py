"""No credential in any output: canaries in an agent URL and a model URL, grepped for everywhere.

Real commands (run, resume, runs, show, gate, rejudge, compare, lint tier 4) run against a
loopback HTTP agent reached as `http://user:CANARY@…` and a fake model endpoint whose base
URL carries `?api_key=CANARY`; the model fails (so its URL lands in error reasons) and some
agent calls fail (so the agent URL lands in end messages). Then every byte of the database,
every file written and everything printed is searched for the canaries, in every form a
library might repeat them (as written, URL-encoded, inside a Basic token).
"""

from __future__ import annotations

import base64
import json
import os
import string
import threading
import time
import traceback
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polygon_voice.cli import app
from polygon_voice.lint import engine as lint_engine
from polygon_voice.lint import logprobs
from polygon_voice.masking import mask_secrets, mask_url, url_secrets
from polygon_voice.testing import FakeLLMServer, Rule
from tests.cli.conftest import EXAMPLE_SUITE, Polygon

PASSWORD = "CanaryPw-7f3a9"  # the agent's password, in its URL's userinfo
API_KEY = "CanaryKey5b1e2"  # the model endpoint's key, in its base URL's query
BASIC = base64.b64encode(f"polygon:{PASSWORD}".encode()).decode()
CANARIES = (PASSWORD, API_KEY, BASIC, quote(PASSWORD, safe=""), "7f3a9", "5b1e2")


class _Agent(BaseHTTPRequestHandler):
    """Greets, then says goodbye to whatever the caller says (so a model caller is asked to
    speak); answers 500 for the crm scenarios and 401 without the password."""

    authorized: list[bool]

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        ok = self.headers.get("Authorization") == f"Basic {BASIC}"
        self.server.authorized.append(ok)  # type: ignore[attr-defined]
        if not ok or body["conversation_id"].startswith("crm"):
            self.send_response(401 if not ok else 500)
            self.end_headers()
            return
        actions: list[dict[str, str]] = [{"kind": "say", "text": "Hello, how can I help?"}]
        if body["event"]["kind"] != "call_started":
            actions = [{"kind": "say", "text": "Goodbye."}, {"kind": "end_call", "reason": "done"}]
        data = json.dumps({"actions": actions}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def agent_server() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Agent)
    server.authorized = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


CALLER_SUITE = """
scenarios:
  - id: model-caller
    caller: llm
    persona: {goal: Change the quantity of order 5590 to 3., facts: {order_id: "5590"}}
"""


def _caller_suite(folder: Path) -> Path:
    head = EXAMPLE_SUITE.read_text().split("\nscenarios:", 1)[0]
    path = folder / "caller_suite.yaml"
    path.write_text(
        head.replace("agent.py:", f"{EXAMPLE_SUITE.parent / 'agent.py'}:") + CALLER_SUITE
    )
    return path


def _llm_config(folder: Path, base_url: str) -> Path:
    # Outside the folder that is searched: this file is the one place the key may be.
    path = folder / "llm.yaml"
    url = f"{base_url}?api_key={API_KEY}"
    path.write_text(
        f"llm:\n  base_url: '{url}'\n  max_retries: 0\n"
        "  judge: {model: fake}\n  caller: {model: fake}\n"
    )
    return path


class _Session:
    """Every command's output, kept to be searched."""

    def __init__(self, polygon: Polygon) -> None:
        self.polygon = polygon
        self.printed: list[str] = []

    def __call__(self, *args: str, expect: int | None = 0) -> str:
        # Every command but lint (which has no database) gets the session's database.
        full = [*args] if args[0] == "lint" else [*args, "--db", str(self.polygon.db)]
        cwd = Path.cwd()
        os.chdir(self.polygon.workdir)
        try:
            result = self.polygon.runner.invoke(app, full)
        finally:
            os.chdir(cwd)
        out, err = result.stdout, result.stderr
        self.printed += [out, err]
        crashed = result.exception is not None and not isinstance(result.exception, SystemExit)
        assert not crashed, (args, "".join(traceback.format_exception(result.exception)))
        if expect is not None:
            assert result.exit_code == expect, (args, out, err)
        return out + err


def _run_id(folder: Path) -> str:
    run_id: str = json.loads((folder / "report.json").read_text())["run_id"]
    return run_id


def _leaks(text: str | bytes) -> list[str]:
    data = text.encode() if isinstance(text, str) else text
    return [canary for canary in CANARIES if canary.encode() in data]


def test_no_canary_reaches_the_database_a_file_or_the_terminal(
    tmp_path: Path, agent_server: ThreadingHTTPServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Lint's tier 3 loads an embedding model for seconds and sends nothing anywhere: skipped.
    monkeypatch.setattr(lint_engine, "_embeddings_unavailable", lambda: "not in this test")
    # Lint's tier 2 endpoint, with its key in the query and nothing listening.
    monkeypatch.setenv(logprobs.ENV_BASE_URL, f"http://127.0.0.1:1/v1?key={API_KEY}")
    monkeypatch.setenv(logprobs.ENV_MODEL, "fake")
    work = tmp_path / "work"
    work.mkdir()
    port = agent_server.server_address[1]
    agent = f"http://polygon:{PASSWORD}@127.0.0.1:{port}/agent"
    gone = f"http://polygon:{PASSWORD}@127.0.0.1:1/agent?token={API_KEY}"  # nothing listens
    rules = [Rule(role="judge", error=500), Rule(role="caller", error=500)]
    with FakeLLMServer(rules) as models:
        config = str(_llm_config(tmp_path, models.base_url))
        polygon = _Session(Polygon(work))
        suite = str(EXAMPLE_SUITE)
        with_llm = ("--judge", "llm", "--llm-config", config, "--no-probes")
        # The models answer 500 and the `gone` agent is not there: exit 3 (infrastructure).
        polygon("run", suite, "--agent", agent, *with_llm, "--out", "judged", expect=3)
        judged = _run_id(work / "judged")
        caller_run = ("run", str(_caller_suite(work)), "--agent", agent, "--out", "caller")
        polygon(*caller_run, "--llm-config", config, expect=3)
        polygon("run", suite, "--agent", gone, "--out", "gone", expect=3)
        # Resuming: the stored agent is masked, so the full URL must be given again.
        refused = polygon("run", suite, "--resume", judged, "--llm-config", config, expect=2)
        assert "carries a credential" in refused
        other = ("--agent", f"{EXAMPLE_SUITE.parent / 'agent.py'}:OrderLineAgent")
        other += ("--llm-config", config)
        assert "was started with --agent" in polygon(
            "run", suite, "--resume", judged, *other, expect=2
        )
        polygon(
            "run", suite, "--resume", judged, "--agent", agent, "--llm-config", config, expect=3
        )
        polygon("runs")
        polygon("show", judged)
        for conversation in ("crm-down", "change-quantity"):
            polygon("show", judged, "--conversation", conversation)
        polygon("gate", judged, expect=None)
        polygon("rejudge", judged, *with_llm[:-1], "--out", "rejudged", expect=3)
        polygon("compare", judged, _run_id(work / "gone"), "--out", "compared", expect=None)
        (work / "prompt.md").write_text("You are a phone agent. Always confirm the order.\n")
        prompt = str(work / "prompt.md")
        linted = polygon("lint", prompt, "--max-tier", "4", "--llm-config", config)
        assert "api_key=***" in linted  # tier 4's judge
        noted = polygon("lint", prompt, "--max-tier", "2")
        assert "v1?key=***" in noted  # tier 2's endpoint

    assert any(agent_server.authorized), "the agent never got the password: nothing was tested"
    assert all(agent_server.authorized), "the password was not sent as a Basic header"
    shown = "\n".join(polygon.printed)
    assert "polygon:***@127.0.0.1" in shown  # masked, not dropped: the user sees which URL
    assert "api_key=***" in (work / "judged" / "report.json").read_text()  # the judge's reasons
    assert "api_key=***" in (work / "caller" / "transcripts.jsonl").read_text()  # the caller's
    assert _leaks(shown) == []
    files = [path for path in work.rglob("*") if path.is_file()]
    assert any(path.name == "polygon.db" for path in files)
    assert any(path.name == "report.json" for path in files)
    leaked = {str(path.relative_to(work)): _leaks(path.read_bytes()) for path in files}
    assert {path: found for path, found in leaked.items() if found} == {}


# -- the masking itself, fuzzed ---------------------------------------------------------------

# "Q9" first: a secret must not be found where it is no secret (in "api.example.com", say).
SECRET = st.text(
    alphabet=string.ascii_letters + string.digits + "-_.~!$*+", min_size=2, max_size=40
).map(lambda text: f"Q9{text}")
KEY_NAMES = [
    "api_key",
    "apikey",
    "api-key",
    "key",
    "token",
    "access_token",
    "sig",
    "signature",
    "secret",
    "password",
    "X-Amz-Signature",
    "X-Goog-Credential",
    "client_secret",
    "refresh_token",
    "auth",
    "code",
]


@settings(max_examples=300, deadline=None)
@given(
    password=SECRET,
    key=SECRET,
    name=st.sampled_from(KEY_NAMES),
    other=st.sampled_from(["", "&model=gpt&api-version=2024-06-01", "&x=1"]),
    wrapper=st.sampled_from(["{}", "url='{}'", "<urlopen error {}>", "POST {} failed", "({})"]),
)
def test_no_url_credential_survives_masking(
    password: str, key: str, name: str, other: str, wrapper: str
) -> None:
    url = f"https://user:{password}@api.example.com:8443/v1?{name}={key}{other}"
    message = wrapper.format(url)
    masked = mask_url(message)
    assert password not in masked.replace("user:***@", "")
    assert f"{name}=***" in masked
    # A library that decoded the URL, or repeated only the host, still leaks nothing.
    retold = mask_secrets(f"{message} (auth {unquote(password)}, key {key})", url_secrets(url))
    assert password not in retold
    assert key not in retold


@given(
    path=st.text(alphabet=string.ascii_letters + string.digits + "/-_.", max_size=30),
    query=st.sampled_from(["", "?model=gpt-4o", "?api-version=2024-06-01&x=1", "?page=2"]),
)
def test_a_url_without_credentials_is_left_as_it_is(path: str, query: str) -> None:
    url = f"http://user@localhost:8000/{path}{query}"
    assert mask_url(url) == url
    assert url_secrets(url) == ()


def test_masking_a_long_text_stays_linear() -> None:
    # The scheme pattern once backtracked over every letter of a long word: quadratic.
    text = "x" * 200_000 + " http://u:p4ss@h/?token=abcd"
    started = time.perf_counter()
    assert mask_url(text).endswith("http://u:***@h/?token=***")
    assert time.perf_counter() - started < 0.5
