"""The Typer application that every `polygon` sub-command registers on, loaded lazily.

`polygon --help` and `polygon --version` must not pay for importing every command (the
run pipeline, the database layer, the judges): each command module is imported only when
its command runs. `COMMANDS` names each command's module and its one-line help, so the
top-level help is printed from this table alone; a test keeps the table equal to the
commands' own help.
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass
from difflib import get_close_matches
from typing import Annotated, Any

import typer
import typer.main
from typer.core import TyperCommand, TyperGroup

# Typer's click classes (Typer 0.29 carries its own copy of click, earlier versions use
# click itself): only Typer's objects are passed around here, so they are typed as Any.
Context = Any
Command = Any


@dataclass(frozen=True)
class CommandEntry:
    """Where a top-level command lives and what `polygon --help` says about it."""

    module: str
    help: str


# In the order `polygon --help` lists them: running, reading, judging again, then tools.
COMMANDS: dict[str, CommandEntry] = {
    "run": CommandEntry(
        "polygon_voice.cli.runs",
        "Run a suite against an agent; store every call; write report.json and transcripts.jsonl.",
    ),
    "import": CommandEntry(
        "polygon_voice.cli.imports",
        "Import real calls (Vapi, Retell, LiveKit, OpenAI messages, CSV, ...) as a stored run.",
    ),
    "replay": CommandEntry(
        "polygon_voice.cli.replay",
        "Replay an imported run's callers against another agent; store it as a run to compare.",
    ),
    "demo": CommandEntry(
        "polygon_voice.cli.three_layer",
        "Run the built-in three-layer suite against both reference agents and compare them.",
    ),
    "runs": CommandEntry("polygon_voice.cli.reading", "List stored runs, newest first."),
    "show": CommandEntry(
        "polygon_voice.cli.reading",
        "Show a stored run's calls with their verdicts, or one call turn by turn.",
    ),
    "gate": CommandEntry(
        "polygon_voice.cli.reading",
        "The release gate of a stored run: exit 0 when it passes, 1 when it fails.",
    ),
    "rejudge": CommandEntry(
        "polygon_voice.cli.judge",
        "Judge a stored run again as a new named judgement set; the run's own set stays.",
    ),
    "compare": CommandEntry(
        "polygon_voice.cli.compare",
        "Compare runs: scorecards, scenario matrix, divergence points, changes told from noise "
        "and an analysis.",
    ),
    "report": CommandEntry(
        "polygon_voice.cli.report", "Write the HTML report and/or JUnit XML of stored runs."
    ),
    "sweep": CommandEntry(
        "polygon_voice.cli.sweep",
        "Run a parameter sweep and print its leaderboard, or show a stored sweep.",
    ),
    "ablate": CommandEntry(
        "polygon_voice.cli.ablate",
        "Rerun a run's failing calls with one factor removed at a time; show what rescues them.",
    ),
    "serve": CommandEntry(
        "polygon_voice.cli.serve",
        "Serve the local web app over the stored runs (docs/web.md).",
    ),
    "probes": CommandEntry(
        "polygon_voice.cli.probes",
        "Behaviour probes: yes/no questions about one behaviour (docs/probes.md).",
    ),
    "personas": CommandEntry(
        "polygon_voice.cli.personas",
        "Simulated callers made from an agent's prompt: generate, list, refresh, sample, mark.",
    ),
    "llm": CommandEntry(
        "polygon_voice.cli.llm",
        "The model endpoints of each role: `polygon llm check` (docs/llm.md).",
    ),
    "lint": CommandEntry(
        "polygon_voice.cli.lint", "Score PROMPT_FILE on five axes and mark the weak places."
    ),
    "noise": CommandEntry(
        "polygon_voice.cli.noise", "Print what the agent hears of TEXT through recognition noise."
    ),
    "schema": CommandEntry(
        "polygon_voice.cli.schema", "Print the JSON Schema of suite files (for editors)."
    ),
}


class LazyGroup(TyperGroup):
    """A command group that imports a command's module only when that command is used.

    While the group's own help is printed, commands not yet loaded are stand-ins carrying
    the table's help line; any other lookup loads the module and builds the real command
    from its Typer registration.
    """

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self._listing = False

    def list_commands(self, ctx: Context) -> list[str]:
        extra = [name for name in self.commands if name not in COMMANDS]
        return [*COMMANDS, *extra]

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        loaded = self.commands.get(cmd_name)
        if loaded is not None:
            return loaded
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        if self._listing:
            return TyperCommand(name=cmd_name, short_help=entry.help)
        command = load_command(cmd_name)
        self.commands[cmd_name] = command
        return command

    def resolve_command(self, ctx: Context, args: list[str]) -> Any:
        # Typer suggests only among the commands already loaded; suggest among all of them.
        name = args[0] if args else ""
        unknown = name and not name.startswith("-") and self.get_command(ctx, name) is None
        if unknown and not ctx.resilient_parsing:
            matches = get_close_matches(name.lower(), self.list_commands(ctx))
            names = ", ".join(repr(match) for match in matches)
            hint = f" Did you mean {names}?" if matches else ""
            ctx.fail(f"No such command {name!r}.{hint}")
        return super().resolve_command(ctx, args)

    def format_help(self, ctx: Context, formatter: Any) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False


def load_command(name: str) -> Command:
    """Import the module of command `name` and build its click command from its registration."""
    importlib.import_module(COMMANDS[name].module)
    for info in app.registered_commands:
        if info.callback is not None and _command_name(info) == name:
            return typer.main.get_command_from_info(
                info,
                pretty_exceptions_short=app.pretty_exceptions_short,
                rich_markup_mode=app.rich_markup_mode,
            )
    for group in app.registered_groups:
        if group.name == name:
            options: dict[str, Any] = {}
            # Older Typer versions suggest no commands (and take no such argument).
            if "suggest_commands" in inspect.signature(typer.main.get_group_from_info).parameters:
                options["suggest_commands"] = getattr(app, "suggest_commands", True)
            return typer.main.get_group_from_info(
                group,
                pretty_exceptions_short=app.pretty_exceptions_short,
                rich_markup_mode=app.rich_markup_mode,
                **options,
            )
    raise LookupError(f"{COMMANDS[name].module} does not register the command '{name}'")


def _command_name(info: typer.models.CommandInfo) -> str:
    assert info.callback is not None
    return info.name or typer.main.get_command_name(info.callback.__name__)


def _print_version(value: bool) -> None:
    if not value:
        return
    from polygon_voice import __version__

    typer.echo(f"polygon-voice {__version__}")
    raise typer.Exit()


app = typer.Typer(
    name="polygon",
    cls=LazyGroup,
    help="Polygon: simulate whole phone calls against a voice agent and judge the outcome.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _polygon(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            help="Print the installed version of Polygon and exit.",
            is_eager=True,
            callback=_print_version,
        ),
    ] = False,
) -> None:
    # The group's options only; every command is a sub-command.
    del version
