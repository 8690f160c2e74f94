"""The README's test command: what `python3 dev.py test` includes and installs."""

from __future__ import annotations

from pathlib import Path

import pytest
from dev import pytest_arguments, system_packages, wants_real_llm

from tests.browser.chromium import find_chromium


def test_the_whole_suite_includes_the_real_server_test() -> None:
    assert wants_real_llm({}, []) is True
    assert wants_real_llm({"CI": "true"}, []) is True


def test_it_is_left_out_when_switched_off_or_when_pytest_is_narrowed() -> None:
    assert wants_real_llm({"POLYGON_REAL_LLM": "0"}, []) is False
    # `dev.py test -k engine` runs what it names, nothing more.
    assert wants_real_llm({}, ["-k", "engine"]) is False


def test_the_whole_suite_runs_on_every_core_and_a_narrowed_one_as_given() -> None:
    # loadscope: a module's tests stay on one worker, so its fixtures are built once.
    assert pytest_arguments([]) == ["-n", "auto", "--dist", "loadscope"]
    assert pytest_arguments(["-k", "engine"]) == ["-k", "engine"]


@pytest.mark.parametrize(
    ("env", "pg_bindir", "chromium", "packages"),
    [
        ({"CI": "true"}, None, None, ["postgresql", "chromium"]),  # one apt-get run for both
        ({"CI": "true"}, Path("/pg"), None, ["chromium"]),
        ({"CI": "true"}, Path("/pg"), Path("/chromium"), []),
        (
            {"CI": "true", "POLYGON_TEST_POSTGRES_URL": "postgresql://u@h/db"},
            None,
            None,
            ["chromium"],
        ),
        ({}, None, None, []),  # a developer's machine: never install system packages
        ({"CI": "1"}, None, None, []),
    ],
)
def test_ci_installs_the_browser_and_the_server_only_when_missing(
    env: dict[str, str], pg_bindir: Path | None, chromium: Path | None, packages: list[str]
) -> None:
    assert system_packages(env, pg_bindir, chromium) == packages


def test_chromium_is_found_where_debian_puts_it_or_on_path(tmp_path: Path) -> None:
    debian = tmp_path / "usr-bin" / "chromium"
    on_path = tmp_path / "path"
    on_path.mkdir()
    launcher = on_path / "chromium"
    launcher.write_text("#!/bin/sh\n")
    launcher.chmod(0o755)
    assert find_chromium(debian, path=str(on_path)) == launcher
    assert find_chromium(debian, path=str(tmp_path / "empty")) is None
    debian.parent.mkdir()
    debian.write_text("#!/bin/sh\n")
    assert find_chromium(debian, path=str(on_path)) == debian


def test_the_real_server_build_starts_in_the_background_only_when_it_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import dev

    from tests import real_llm_server

    folder = tmp_path / "real-llm-venv"
    monkeypatch.setenv(real_llm_server.VENV_ENV, str(folder))
    monkeypatch.setattr(dev, "ROOT", tmp_path)
    started: list[list[str]] = []

    class Recorded:
        def __init__(self, command: list[str], **_: object) -> None:
            started.append(command)

    monkeypatch.setattr(dev.subprocess, "Popen", Recorded)
    assert isinstance(dev.start_real_llm_build(), Recorded)
    assert started[0][-1].endswith("real_llm_server.py")
    assert (tmp_path / ".polygon" / "real-llm-build.log").exists()
    # Built (the interpreter and the stamp of the pinned packages): nothing is started.
    (folder / "bin").mkdir(parents=True)
    (folder / "bin" / "python").touch()
    (folder / ".polygon-real-llm").write_text(real_llm_server._stamp())
    assert dev.start_real_llm_build() is None
    assert len(started) == 1
