"""A lint request past POLYGON_LINT_TIMEOUT is abandoned and its connection closed (tiers 2, 4)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from polygon_voice.lint import engine, lint
from polygon_voice.llm import load_llm_config
from polygon_voice.llm.client import make_client  # noqa: F401  (the SDK loads outside the timer)

TEXT = "Log the widget in the flux capacitor ledger. Ask for the order number."


class SilentServer:
    """Takes requests and never answers; records whether each client closed its connection."""

    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self.requests = 0
        self.closed = 0
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self._listener.accept()
            except OSError:
                return  # stopped
            threading.Thread(target=self._hold, args=(connection,), daemon=True).start()

    def _hold(self, connection: socket.socket) -> None:
        connection.settimeout(10)
        with connection:
            try:
                if connection.recv(65536):
                    self.requests += 1
                # Nothing is ever sent: the next read returns b"" only when the client closes.
                while connection.recv(65536):
                    pass
                self.closed += 1
            except OSError:
                return

    def stop(self) -> None:
        self._listener.close()


@pytest.fixture
def silent() -> Iterator[SilentServer]:
    server = SilentServer()
    yield server
    server.stop()


def _closed(server: SilentServer) -> bool:
    # The client's close reaches the server's thread a moment later.
    for _ in range(50):
        if server.closed and server.closed == server.requests:
            return True
        threading.Event().wait(0.05)
    return False


def test_tier_two_closes_a_request_it_gives_up_on(silent: SilentServer) -> None:
    env = {
        "POLYGON_LINT_LOGPROBS_BASE_URL": f"http://127.0.0.1:{silent.port}/v1",
        "POLYGON_LINT_LOGPROBS_MODEL": "tiny",
        "POLYGON_LINT_TIMEOUT": "0.3",
    }
    report = lint(TEXT, max_tier=2, env=env)
    assert report.tiers_run == [1]
    assert "timed out" in report.tiers_skipped[0].reason
    assert silent.requests == 1
    assert _closed(silent)


def test_tier_four_closes_a_request_it_gives_up_on(
    silent: SilentServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the judge's response cache stays in the test's folder
    # Tier 3 would load an embedding model for seconds and talks to no server: left out.
    monkeypatch.setattr(engine, "_embeddings_unavailable", lambda: "not in this test")
    for name in ("POLYGON_BASE_URL", "POLYGON_JUDGE_BASE_URL", "POLYGON_JUDGE_MODEL"):
        monkeypatch.delenv(name, raising=False)
    config = tmp_path / "llm.yaml"
    config.write_text(
        f"llm:\n  judge: {{model: fake, base_url: 'http://127.0.0.1:{silent.port}/v1'}}\n",
        encoding="utf-8",
    )
    settings = load_llm_config(config)
    env = {"POLYGON_LINT_TIMEOUT": "1.5"}
    report = lint(TEXT, max_tier=4, settings=settings, env=env)
    skipped = {skip.tier: skip for skip in report.tiers_skipped}
    assert 4 not in report.tiers_run
    assert skipped[4].failed
    assert "no answer within 1.5 s (POLYGON_LINT_TIMEOUT)" in skipped[4].reason
    assert silent.requests == 1  # abandoned, not retried
    assert _closed(silent)
