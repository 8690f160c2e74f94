"""Run the fake LLM server as its own process, for offline CI and benchmarks.

    python -m polygon_voice.testing.fake_llm --script rules.yaml [--port 0] [--latency 0.2]
        [--dialect openai|llamacpp|vllm|ollama] [--no-tool-flags]

Prints `fake LLM server listening on http://127.0.0.1:PORT/v1` (port 0 picks a free one),
then serves until interrupted (Ctrl-C or SIGTERM).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence
from contextlib import ExitStack
from types import FrameType

from polygon_voice.testing.dialects import DIALECTS
from polygon_voice.testing.script import Rule, Script, load_script
from polygon_voice.testing.server import FakeLLMServer, open_log

# Without a script every request gets this answer, so the server is useful as it comes.
DEFAULT_RULES = [Rule(text="OK")]


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the options, start the server, wait for a signal."""
    parser = argparse.ArgumentParser(
        prog="python -m polygon_voice.testing.fake_llm",
        description="An OpenAI-compatible chat-completions server answering from a script.",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (loopback)")
    parser.add_argument("--port", type=int, default=0, help="port (0: any free port)")
    parser.add_argument("--script", help="YAML/JSON file with `rules:` (default: answer OK)")
    parser.add_argument("--latency", type=float, help="seconds before every answer")
    parser.add_argument("--log", help="append each request as a JSON line to this file")
    parser.add_argument(
        "--dialect",
        choices=DIALECTS,
        default="openai",
        help="take requests as this server kind does (docs/llm.md, 'Server kinds')",
    )
    parser.add_argument(
        "--no-tool-flags",
        action="store_true",
        help="with --dialect vllm: refuse tools, as vLLM started without --enable-auto-tool-choice",
    )
    args = parser.parse_args(argv)
    try:
        script = load_script(args.script) if args.script else Script(rules=DEFAULT_RULES)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    with ExitStack() as stack:
        log_file = stack.enter_context(open_log(args.log)) if args.log else None
        server = FakeLLMServer(
            script,
            latency=args.latency,
            host=args.host,
            port=args.port,
            keep_log=False,
            log_file=log_file,
            dialect=args.dialect,
            tool_flags=not args.no_tool_flags,
        )
        stack.enter_context(server)
        print(f"fake LLM server listening on {server.base_url}", flush=True)
        # A timeout on the wait keeps the main thread responsive to signals.
        while not stop.wait(0.5):
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
