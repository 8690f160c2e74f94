"""Child processes of the tests and the scripts: a free loopback port, a stop that always ends."""

from __future__ import annotations

import signal
import socket
import subprocess
from typing import Any

# Long enough for a server to close its connections and files, short enough not to hang a run.
STOP_SECONDS = 10


def free_port() -> int:
    """A TCP port free on loopback now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def stop(process: subprocess.Popen[Any], how: signal.Signals = signal.SIGTERM) -> None:
    """Ask the process to end with `how`; kill it if it is still there after STOP_SECONDS."""
    process.send_signal(how)
    try:
        process.wait(timeout=STOP_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
