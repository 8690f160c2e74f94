"""Where `--agent` finds the user's code, and what it says when it cannot."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from polygon_voice.agents import AgentContext, AgentLoadError, resolve_agent
from polygon_voice.suites import builtin_suite_path

CONTEXT = AgentContext(conversation_id="c", scenario_id="s", language="en", seed=1)
AGENT = "class Agent:\n    name = {name!r}\n    def respond(self, event):\n        return []\n"


@pytest.fixture(autouse=True)
def _clean_imports() -> Iterator[None]:
    """Each test imports its own `mypkg` / `helpers`: forget them, and the path, after it."""
    path, modules = list(sys.path), set(sys.modules)
    yield
    sys.path[:] = path
    for name in set(sys.modules) - modules:
        del sys.modules[name]


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def built(spec: str, base_dir: Path | None = None, *, cwd: Path) -> Any:
    return resolve_agent(spec, base_dir, cwd=cwd)(CONTEXT)


def test_a_package_in_the_current_folder_is_importable(tmp_path: Path) -> None:
    write(tmp_path / "mypkg" / "__init__.py", "")
    write(tmp_path / "mypkg" / "bot.py", AGENT.format(name="mine"))
    assert built("mypkg.bot:Agent", cwd=tmp_path).name == "mine"


def test_a_relative_file_is_looked_for_in_the_current_folder_before_the_suites(
    tmp_path: Path,
) -> None:
    here, suite = tmp_path / "here", tmp_path / "suite"
    write(here / "bot.py", AGENT.format(name="current folder"))
    write(suite / "bot.py", AGENT.format(name="suite folder"))
    write(suite / "only.py", AGENT.format(name="beside the suite"))
    assert built("bot.py:Agent", suite, cwd=here).name == "current folder"
    assert built("only.py:Agent", suite, cwd=here).name == "beside the suite"


def test_a_built_in_suite_folder_is_never_searched(tmp_path: Path) -> None:
    suite = builtin_suite_path("three-layer")
    assert suite is not None
    # `__init__.py` exists beside the built-in suites; it must not be taken as user code.
    with pytest.raises(AgentLoadError) as error:
        resolve_agent("__init__.py:BUILTIN_SUITES", suite.parent, cwd=tmp_path)
    message = str(error.value)
    assert "the current folder" in message
    assert "suite's folder" not in message
    assert str(suite.parent) not in message


def test_an_absolute_path_is_used_as_given(tmp_path: Path) -> None:
    file = write(tmp_path / "far" / "bot.py", AGENT.format(name="far"))
    write(tmp_path / "here" / "far" / "bot.py", AGENT.format(name="decoy"))
    assert built(f"{file}:Agent", cwd=tmp_path / "here").name == "far"


def test_a_missing_file_lists_every_place_looked(tmp_path: Path) -> None:
    here, suite = tmp_path / "here", tmp_path / "suite"
    here.mkdir()
    suite.mkdir()
    with pytest.raises(AgentLoadError) as error:
        resolve_agent("bots/bot.py:Agent", suite, cwd=here)
    message = str(error.value)
    assert str(here / "bots" / "bot.py") in message
    assert str(suite / "bots" / "bot.py") in message


def test_an_agent_file_imports_the_module_beside_it(tmp_path: Path) -> None:
    write(tmp_path / "bots" / "helpers.py", "GREETING = 'from the sibling'\n")
    write(
        tmp_path / "bots" / "bot.py",
        "import helpers\n\nclass Agent:\n    name = helpers.GREETING\n"
        "    def respond(self, event):\n        return []\n",
    )
    agent = built("bots/bot.py:Agent", cwd=tmp_path)
    assert agent.name == "from the sibling"
    # The folder was on the import path only while the file ran.
    assert str((tmp_path / "bots").resolve()) not in sys.path


def test_two_agent_folders_each_get_their_own_same_named_sibling(tmp_path: Path) -> None:
    for team in ("red", "blue"):
        write(tmp_path / team / "helpers.py", f"TEAM = {team!r}\n")
        write(
            tmp_path / team / "bot.py",
            "import helpers\n\nclass Agent:\n    team = helpers.TEAM\n"
            "    def respond(self, event):\n        return []\n",
        )
    red = built("red/bot.py:Agent", cwd=tmp_path)
    blue = built("blue/bot.py:Agent", cwd=tmp_path)
    assert (red.team, blue.team) == ("red", "blue")


def test_two_files_of_the_same_name_are_two_modules(tmp_path: Path) -> None:
    write(tmp_path / "a" / "bot.py", AGENT.format(name="a"))
    write(tmp_path / "b" / "bot.py", AGENT.format(name="b"))
    first = built("a/bot.py:Agent", cwd=tmp_path)
    second = built("b/bot.py:Agent", cwd=tmp_path)
    assert (first.name, second.name) == ("a", "b")


@pytest.mark.parametrize("spec", ["bot.py:Agnet", "bot:Agnet"])
def test_a_misspelt_name_gets_did_you_mean_with_the_users_name_for_the_code(
    spec: str, tmp_path: Path
) -> None:
    write(tmp_path / "bot.py", AGENT.format(name="x") + "\nAGENT_NAME = 'x'\n")
    with pytest.raises(AgentLoadError) as error:
        resolve_agent(spec, cwd=tmp_path)
    message = str(error.value)
    target = spec.partition(":")[0]  # as the user wrote it
    assert f"{target} has no 'Agnet'; did you mean 'Agent'?" in message
    assert "_polygon_agent_" not in message


def test_a_name_nothing_resembles_lists_what_the_file_defines(tmp_path: Path) -> None:
    write(
        tmp_path / "bot.py",
        "import json\n\nclass Greeter:\n    pass\n\n"
        "def make_agent(context):\n    return Greeter()\n",
    )
    with pytest.raises(AgentLoadError, match=r"has no 'Zzz'; it defines Greeter, make_agent$"):
        resolve_agent("bot.py:Zzz", cwd=tmp_path)


def test_a_syntax_error_names_the_file_and_line(tmp_path: Path) -> None:
    write(tmp_path / "bot.py", "class Agent:\n    def respond(self, event:\n        return []\n")
    with pytest.raises(AgentLoadError) as error:
        resolve_agent("bot.py:Agent", cwd=tmp_path)
    first, _, source = str(error.value).partition("\n")
    assert first.startswith("agent 'bot.py:Agent': importing bot.py failed: bot.py:2: SyntaxError:")
    assert source.strip() == "def respond(self, event:"


def test_an_error_raised_while_importing_points_at_the_users_last_line(tmp_path: Path) -> None:
    write(tmp_path / "mypkg" / "__init__.py", "")
    write(tmp_path / "mypkg" / "config.py", "import json\n\nSETTINGS = json.loads('{')\n")
    write(tmp_path / "mypkg" / "bot.py", "from mypkg.config import SETTINGS\n")
    with pytest.raises(AgentLoadError) as error:
        resolve_agent("mypkg.bot:Agent", cwd=tmp_path)
    message = str(error.value)
    # The last frame in the user's code, not json's internals, with the original message.
    assert "importing mypkg.bot failed: mypkg/config.py:3: JSONDecodeError: Expecting" in message
    assert message.endswith("SETTINGS = json.loads('{')")


def test_a_missing_dependency_of_the_agent_is_not_a_missing_agent(tmp_path: Path) -> None:
    write(tmp_path / "bot.py", "import no_such_library_for_polygon\n")
    with pytest.raises(AgentLoadError) as error:
        resolve_agent("bot:Agent", cwd=tmp_path)
    assert "bot.py:1: ModuleNotFoundError: No module named 'no_such_library_for_polygon'" in str(
        error.value
    )


def test_a_missing_module_names_the_places_looked(tmp_path: Path) -> None:
    with pytest.raises(AgentLoadError) as error:
        resolve_agent("mypkg.bot:Agent", tmp_path / "suite", cwd=tmp_path)
    message = str(error.value)
    assert "no module named 'mypkg'" in message
    assert f"the current folder ({tmp_path})" in message
    assert "the installed packages" in message


@pytest.mark.parametrize(
    ("spec", "hint"),
    [
        ("bots/bot:Agent", "for the file, write 'bots/bot.py:Agent'"),
        ("bots/bot.py", "name the class or factory after a colon: 'bots/bot.py:ClassName'"),
    ],
)
def test_a_file_named_like_a_module_or_without_a_name_gets_the_right_form(
    spec: str, hint: str, tmp_path: Path
) -> None:
    write(tmp_path / "bots" / "bot.py", AGENT.format(name="x"))
    with pytest.raises(AgentLoadError, match=hint):
        resolve_agent(spec, cwd=tmp_path)


def test_an_agent_file_that_exits_while_importing_is_an_error_not_an_exit(tmp_path: Path) -> None:
    write(tmp_path / "bot.py", "import sys\nsys.exit(3)\n")
    with pytest.raises(AgentLoadError, match=r"bot.py:2: SystemExit: 3"):
        resolve_agent("bot.py:Agent", cwd=tmp_path)


def test_a_relative_import_in_a_file_agent_points_to_the_module_form(tmp_path: Path) -> None:
    write(tmp_path / "pkg" / "__init__.py", "")
    write(tmp_path / "pkg" / "helpers.py", "TEAM = 'pkg'\n")
    write(
        tmp_path / "pkg" / "bot.py",
        "from . import helpers\n\nclass Agent:\n    team = helpers.TEAM\n"
        "    def respond(self, event):\n        return []\n",
    )
    with pytest.raises(AgentLoadError, match=r"pkg/bot.py:1: ImportError: .*'package.module:NAME'"):
        resolve_agent("pkg/bot.py:Agent", cwd=tmp_path)
    assert built("pkg.bot:Agent", cwd=tmp_path).team == "pkg"
