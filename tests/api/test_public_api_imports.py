"""What sits on the public API stays on it: the pytest plugin imports only `polygon_voice` and
`polygon_voice.api`; the framework adapters (LiveKit, Pipecat) import neither the command
(`polygon_voice.cli`) nor a private module, only the API, the event and action models, the
agent protocol they implement and the model settings (`polygon_voice.llm`, docs/llm.md).
Read from the source (ast), so a lazy import inside a function counts as much as one at the top."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.cli.conftest import ROOT

SRC = ROOT / "src" / "polygon_voice"
PLUGIN = SRC / "pytest_plugin"
ADAPTER_PREFIXES = ("livekit", "pipecat")
# polygon_voice.X and its modules for these X: the API, the events and actions, the agent
# protocol; and these packages themselves (not their modules): the model settings of docs/llm.md.
ADAPTER_ALLOWED = {"api", "model", "agents"}
ADAPTER_ALLOWED_PACKAGES = {"polygon_voice.llm"}


def polygon_imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import of a polygon_voice module in the file, relative ones
    made absolute."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = ".".join(path.relative_to(SRC.parent).with_suffix("").parts)
    if path.name == "__init__.py":
        package = package.rsplit(".", 1)[0] + "._"
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = package.split(".")[: -node.level]
                module = ".".join([*base, module] if module else base)
            found.append((node.lineno, module))
    return [
        (line, m) for line, m in found if m == "polygon_voice" or m.startswith("polygon_voice.")
    ]


def adapter_files() -> list[Path]:
    agents = SRC / "agents"
    files: list[Path] = []
    for entry in sorted(agents.iterdir()):
        if not entry.name.startswith(ADAPTER_PREFIXES):
            continue
        files += sorted(entry.rglob("*.py")) if entry.is_dir() else [entry]
    return [f for f in files if f.suffix == ".py"]


def is_private(module: str) -> bool:
    return any(part.startswith("_") for part in module.split("."))


def plugin_problems(path: Path) -> list[str]:
    own = "polygon_voice.pytest_plugin"
    return [
        f"{path.relative_to(ROOT)}:{line}: imports {module}"
        for line, module in polygon_imports(path)
        if module not in ("polygon_voice", "polygon_voice.api") and not module.startswith(own)
    ]


def adapter_problems(path: Path) -> list[str]:
    problems = []
    for line, module in polygon_imports(path):
        parts = module.split(".")
        allowed = len(parts) == 1 or parts[1] in ADAPTER_ALLOWED
        allowed = allowed or module in ADAPTER_ALLOWED_PACKAGES
        if not allowed or is_private(module) or parts[1:2] == ["cli"]:
            problems.append(f"{path.relative_to(ROOT)}:{line}: imports {module}")
    return problems


def test_the_plugin_imports_only_the_public_api() -> None:
    files = sorted(PLUGIN.rglob("*.py"))
    assert files, "the pytest plugin's package is missing"
    assert [p for f in files for p in plugin_problems(f)] == []


def test_the_adapters_import_no_command_and_no_private_module() -> None:
    files = adapter_files()
    if not files:
        pytest.skip("no framework adapter yet")
    assert [p for f in files for p in adapter_problems(f)] == []


def test_the_scan_sees_what_it_must_refuse(monkeypatch: pytest.MonkeyPatch) -> None:
    # The checks above pass only if they can fail: a file with each kind of import is refused.
    fake = SRC / "agents" / "livekit_probe_for_scan_test.py"
    source = (
        "from polygon_voice.cli.app import app\n"
        "def late():\n"
        "    from polygon_voice.runner.run import SuiteRunner\n"
        "    import polygon_voice._lazy\n"
        "    from polygon_voice.llm.client import LLMClient\n"
        "    from polygon_voice.llm import load_llm_config\n"
        "from polygon_voice.api import run_suite\n"
        "from . import base\n"
    )
    monkeypatch.setattr(Path, "read_text", lambda self, encoding=None: source)
    problems = adapter_problems(fake)
    assert [p.rsplit(" ", 1)[1] for p in problems] == [
        "polygon_voice.cli.app",
        "polygon_voice.runner.run",
        "polygon_voice._lazy",
        "polygon_voice.llm.client",
    ]
    plugin_file = PLUGIN / "probe.py"
    refused = [p.rsplit(" ", 1)[1] for p in plugin_problems(plugin_file)]
    assert "polygon_voice.runner.run" in refused
    assert "polygon_voice.api" not in refused
